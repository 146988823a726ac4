//go:build !unix

package runner

import "os/exec"

// setProcessAttributes does nothing where process groups do not exist.
func setProcessAttributes(*exec.Cmd) {}

// startWorker starts cmd.
func startWorker(cmd *exec.Cmd) error { return cmd.Start() }

// killProcessGroup kills the worker.
func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
