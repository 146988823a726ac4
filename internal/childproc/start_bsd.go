//go:build unix && !linux

package childproc

import (
	"os/exec"
	"syscall"
)

// setAttributes gives the child a process group of its own. There is no parent-death
// signal here.
func setAttributes(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

func start(cmd *exec.Cmd) error { return cmd.Start() }
