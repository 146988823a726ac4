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

// startIdle starts cmd and lowers its priority to nice 19; what it starts before that
// keeps the default priority.
func startIdle(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, 19)
	return nil
}
