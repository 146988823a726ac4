//go:build linux

package childproc

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

func setAttributes(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// spawner is the one goroutine that forks children, locked to a thread that lives as long
// as the process (see the package comment).
var spawner = sync.OnceValue(func() chan<- spawnRequest {
	reqs := make(chan spawnRequest)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the process
		for r := range reqs {
			r.done <- r.cmd.Start()
		}
	}()
	return reqs
})

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func start(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	spawner() <- spawnRequest{cmd: cmd, done: done}
	return <-done
}
