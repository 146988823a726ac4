// Package childproc starts the child processes wasmgap owns — kernel workers (package
// runner), language drivers and their compilers (internal/engine/driver, external),
// browsers (internal/headless), builds of user kernels (custom) and of kernels.wasm
// (package wasm), the runtimes' version probes (driver, benchtool) — so that none outlives
// the process that started it and none leaves a grandchild behind. A long-lived child is
// started with Start; one that runs to its end and is read with CombinedOutput, its
// context killing the whole group (Command). A test keeps every program file of the module
// that imports os/exec from starting a command itself.
//
// Each child gets a process group of its own, so that KillGroup reaches whatever it started
// (a shell's children, the go command's compilers) and frees the pipes they hold. On Linux
// the kernel also kills the child when its parent dies (the parent-death signal, SIGKILL),
// a kill -9 of the server included. Linux sends that signal when the *thread* that forked
// the child exits, not the process, and Go may end a thread (one whose locked goroutine
// returned): Start forks every child from one goroutine locked to a thread that never ends.
// Elsewhere a child must watch for its parent itself (the runner's workers watch their
// stdin) or be ended by its time limit.
package childproc

import "os/exec"

// Option changes how Start starts a child.
type Option int

// Idle starts the child at idle priority, so that it takes only CPU time nothing else
// wants: on Linux under SCHED_IDLE with a nice value of 19, which every process it starts
// inherits; on other Unix systems at nice 19 (set just after it starts). Background work
// that must not compete with measurements uses it.
const Idle Option = 1

// Start starts cmd in a process group of its own that, on Linux, dies with this process.
// It keeps the rest of cmd.SysProcAttr as set.
func Start(cmd *exec.Cmd, opts ...Option) error {
	setAttributes(cmd)
	for _, o := range opts {
		if o == Idle {
			return startIdle(cmd)
		}
	}
	return start(cmd)
}

// KillGroup kills cmd's whole process group with SIGKILL (cmd alone where there are no
// process groups). A command that was not started is not an error.
func KillGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return killGroup(cmd)
}
