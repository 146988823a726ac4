//go:build linux

package peers

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// setProcessGroup starts the driver in a process group of its own, so that killing it
// also ends whatever it started (a shell's children) and so frees its output pipe, and has
// the kernel kill it when the process that started it dies: a worker process killed at
// its time limit (package runner) takes its driver with it, mid-call or not.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
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

// spawn is the one goroutine that starts drivers. Linux sends the parent-death signal
// when the thread that forked the child exits, not the process: Go may end a thread (one
// whose locked goroutine returned), so drivers are forked from a goroutine locked to a
// thread that never ends.
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

// startDriver starts cmd from the spawning thread.
func startDriver(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	spawn() <- spawnRequest{cmd: cmd, done: done}
	return <-done
}
