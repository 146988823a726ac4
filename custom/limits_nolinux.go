//go:build !linux

package custom

import "os/exec"

func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
