//go:build unix && !linux

package runner

import (
	"os/exec"
	"syscall"
)

// setProcessAttributes starts the worker in a process group of its own, so that a kill
// reaches everything it started. (No parent-death signal here: the worker watches its
// stdin instead.)
func setProcessAttributes(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// startWorker starts cmd.
func startWorker(cmd *exec.Cmd) error { return cmd.Start() }

// killProcessGroup kills the worker's whole process group.
func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}
