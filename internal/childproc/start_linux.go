//go:build linux

package childproc

import (
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

func setAttributes(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// spawner is the goroutine that forks children, locked to a thread that lives as long
// as the process (see the package comment).
var spawner = sync.OnceValue(func() chan<- spawnRequest { return newSpawner(nil) })

// idleSpawner forks the children started with Idle: its thread runs under SCHED_IDLE at
// nice 19, which a child inherits from the thread that forks it (and passes on to its
// own children), so that no child runs at normal priority for a moment.
var idleSpawner = sync.OnceValue(func() chan<- spawnRequest {
	return newSpawner(func() error {
		// Both apply to the calling thread alone on Linux: the spawner's own.
		if err := unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}, 0); err != nil {
			return fmt.Errorf("set the idle scheduling policy: %w", err)
		}
		if err := unix.Setpriority(unix.PRIO_PROCESS, 0, 19); err != nil {
			return fmt.Errorf("set nice 19: %w", err)
		}
		return nil
	})
})

// newSpawner starts a goroutine that locks itself to a thread, runs setup on it, and then
// starts each command it is sent; a setup error fails every start.
func newSpawner(setup func() error) chan<- spawnRequest {
	reqs := make(chan spawnRequest)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the process
		var err error
		if setup != nil {
			err = setup()
		}
		for r := range reqs {
			if err != nil {
				r.done <- err
				continue
			}
			r.done <- r.cmd.Start()
		}
	}()
	return reqs
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func start(cmd *exec.Cmd) error { return spawnOn(spawner(), cmd) }

func startIdle(cmd *exec.Cmd) error { return spawnOn(idleSpawner(), cmd) }

func spawnOn(s chan<- spawnRequest, cmd *exec.Cmd) error {
	done := make(chan error, 1)
	s <- spawnRequest{cmd: cmd, done: done}
	return <-done
}
