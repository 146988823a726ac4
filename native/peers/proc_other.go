//go:build !unix

package peers

import "os/exec"

// setProcessGroup does nothing where there are no process groups.
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup kills the driver.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

// startDriver starts cmd.
func startDriver(cmd *exec.Cmd) error { return cmd.Start() }
