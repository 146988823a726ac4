//go:build linux

package runner

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// setProcessAttributes starts the worker in a process group of its own, so that a kill
// reaches everything it started, and has the kernel kill it when its parent dies.
func setProcessAttributes(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// spawn is the one goroutine that starts workers. Linux sends the parent-death signal
// when the thread that forked the child exits, not the process: Go may end a thread
// (one whose locked goroutine returned), so workers are forked from a goroutine locked to
// a thread that never ends.
var spawn = sync.OnceValue(func() chan<- spawnRequest {
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

// startWorker starts cmd from the spawning thread.
func startWorker(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	spawn() <- spawnRequest{cmd: cmd, done: done}
	return <-done
}

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
