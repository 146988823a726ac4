//go:build unix && !linux

package peers

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the driver in a process group of its own, so that killing it
// also ends whatever it started (a shell's children) and so frees its output pipe.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup kills the driver's process group.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		cmd.Process.Kill()
	}
}

// startDriver starts cmd.
func startDriver(cmd *exec.Cmd) error { return cmd.Start() }
