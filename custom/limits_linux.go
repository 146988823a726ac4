//go:build linux

package custom

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// setParentDeath has the kernel kill a build when this process dies (the signal survives
// the helper's exec of the go command), so that no build outlives the server.
func setParentDeath(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// spawner is the one goroutine that starts builds. Linux sends the parent-death signal
// when the thread that forked the child exits, not the process: builds are forked from a
// goroutine locked to a thread that never ends (as package runner does for its workers).
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

// startCmd starts cmd from the spawning thread.
func startCmd(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	spawner() <- spawnRequest{cmd: cmd, done: done}
	return <-done
}
