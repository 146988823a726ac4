package custom

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/childproc"
)

// limitEnv carries the rlimits and the command to a child of this program that sets them
// on itself and then becomes the command (see ExecLimitedIfRequested).
const limitEnv = "WASMGAP_LIMITED_EXEC"

// Limits are the resource limits of a build (rlimits, inherited by every process the go
// command starts). They were measured on the go command of Go 1.26 building a kernel for
// GOOS=wasip1: it fails to start under 512 MiB of address space and builds in 1 GiB (its
// resident set peaks at 45 MB warm, 220 MB while compiling the standard library), so 2
// GiB leaves room for large sources without letting a build take the machine's memory.
type Limits struct {
	// AddressSpace caps each process's virtual memory (RLIMIT_AS), in bytes.
	AddressSpace uint64 `json:"as"`
	// CPU caps each process's CPU time (RLIMIT_CPU), in seconds.
	CPU uint64 `json:"cpu"`
	// FileSize caps any file a process writes (RLIMIT_FSIZE), in bytes.
	FileSize uint64 `json:"fsize"`
	// Files caps open files per process (RLIMIT_NOFILE).
	Files uint64 `json:"nofile"`
}

// BuildLimits are the limits every build runs under. RLIMIT_NPROC is not set: Linux
// counts it per user (threads included), not per process tree, so no value is both safe
// and sufficient; the build's process group is killed at its time limit instead.
//
// FileSize, 64 MiB, stops a compiler or a linker that writes a huge archive or module
// (a doubled string constant, a large array literal) before it fills the disk: the
// largest archive of the standard library for wasip1 is under 20 MB.
var BuildLimits = Limits{AddressSpace: 2 << 30, CPU: 120, FileSize: 64 << 20, Files: 1024}

type limitedExec struct {
	Limits Limits   `json:"limits"`
	Argv   []string `json:"argv"`
}

// limitedCommand returns a command that runs argv[0] with env under BuildLimits, in a
// process group of its own that is killed when ctx ends: this program re-executed with
// limitEnv set, which applies the limits and then executes the command.
func limitedCommand(ctx context.Context, bin string, args []string, env []string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this program to start a build: %w", err)
	}
	spec, err := json.Marshal(limitedExec{Limits: BuildLimits, Argv: append([]string{bin}, args...)})
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(append([]string(nil), env...), limitEnv+"="+string(spec))
	cmd.Cancel = func() error { return childproc.KillGroup(cmd) }
	cmd.WaitDelay = 2 * time.Second
	return cmd, nil
}

// ExecLimitedIfRequested turns this process into a limited build command when a Builder
// started it as one, and never returns then; otherwise it returns at once. Call it first
// in main (runner.ServeWorkerIfRequested does) and in TestMain of packages that build.
func ExecLimitedIfRequested() {
	spec := os.Getenv(limitEnv)
	if spec == "" {
		return
	}
	var le limitedExec
	if err := json.Unmarshal([]byte(spec), &le); err != nil || len(le.Argv) == 0 {
		fmt.Fprintln(os.Stderr, "wasmgap: bad limited command:", err)
		os.Exit(3)
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, limitEnv+"=") {
			env = append(env, kv)
		}
	}
	if err := execLimited(le.Limits, le.Argv, env); err != nil {
		fmt.Fprintln(os.Stderr, "wasmgap: run the build:", err)
		os.Exit(3)
	}
}

// WorkerAddressSpace caps the virtual memory of a worker process that runs a user kernel
// (RLIMIT_AS): room for a Go process (a few hundred MiB of reservations), wazero's
// compiled code and one module's linear memory at its 1 GiB cap (growing it copies it
// once), and nothing like the 10 GiB an allocation in interpreted code could ask for.
const WorkerAddressSpace = 4 << 30

// LimitWorker caps this process's memory at WorkerAddressSpace. A worker process calls it
// before it runs a user kernel, so that a kernel that allocates without end fails on its
// own instead of taking the machine's memory.
func LimitWorker() error { return limitSelf(WorkerAddressSpace) }
