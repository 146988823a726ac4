//go:build !unix

package childproc

import "os/exec"

// setAttributes does nothing where there are no process groups.
func setAttributes(*exec.Cmd) {}

func start(cmd *exec.Cmd) error { return cmd.Start() }

func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }

// startIdle starts cmd as start does: there is no idle priority to give here.
func startIdle(cmd *exec.Cmd) error { return cmd.Start() }
