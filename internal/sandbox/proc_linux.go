package sandbox

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wasmgap/wasmgap/internal/childproc"

	"golang.org/x/sys/unix"
)

// ownProcEnv marks a child that Isolate started in a PID and a mount namespace of its
// own: Apply mounts its /proc.
const ownProcEnv = "WASMGAP_SANDBOX_OWN_PROC"

// probeEnv makes this binary, started by ownProcState, try to mount a /proc of its own
// and exit: 0 when it could, else 1 with the reason on stderr.
const probeEnv = "WASMGAP_SANDBOX_PROBE"

// init answers ownProcState's probe, and mounts a fenced child's /proc, before anything
// else of the binary runs: in package initialisation, so that every binary that imports
// this package does both (a binary that did not would run as itself, and a test binary
// would run its tests again).
func init() {
	switch {
	case os.Getenv(probeEnv) == "1":
		if err := mountOwnProc(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case os.Getenv(ownProcEnv) == "1":
		err := enterOwnProc()
		fmt.Fprintln(os.Stderr, "wasmgap: sandbox:", err)
		os.Exit(3)
	}
}

// enterOwnProc mounts this child's /proc with the capability it was started with, then
// runs this binary again, as itself with ownProcEnv=mounted, holding no capability: the
// exec drops them all (the ambient set cleared; for root, SECBIT_NOROOT), on every
// thread at once, which a running Go program cannot do where cgo is linked.
func enterOwnProc() error {
	runtime.LockOSThread() // the thread whose credentials the exec keeps
	if err := mountOwnProc(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("own /proc: clear the ambient capabilities: %w", err)
	}
	// linux/securebits.h: SECBIT_NOROOT and SECBIT_NO_CAP_AMBIENT_RAISE, each locked.
	const noRoot, noRootLocked, noAmbient, noAmbientLocked = 1 << 0, 1 << 1, 1 << 6, 1 << 7
	const secbits = noRoot | noRootLocked | noAmbient | noAmbientLocked
	// Another user's capabilities end with the exec once the ambient set is empty; root
	// (the machine's, mapped to itself) would get them all again but for these bits.
	if os.Getuid() == 0 {
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, secbits, 0, 0, 0); err != nil {
			return fmt.Errorf("own /proc: give up root's capabilities: %w", err)
		}
	}
	env := os.Environ()
	for i, kv := range env {
		if strings.HasPrefix(kv, ownProcEnv+"=") {
			env[i] = ownProcEnv + "=" + ownProcMounted
		}
	}
	return fmt.Errorf("own /proc: run again: %w", syscall.Exec("/proc/self/exe", os.Args, env))
}

// ownProcMounted is ownProcEnv's value once enterOwnProc has mounted the /proc.
const ownProcMounted = "mounted"

// mountOwnProc mounts a /proc of this PID namespace over /proc, in this mount
// namespace (made private first, so that nothing propagates out of it): the /proc of
// a process that Isolate started with ownProcEnv, which is its namespace's PID 1.
func mountOwnProc() error {
	if os.Getpid() != 1 {
		return fmt.Errorf("own /proc: this process is %d, not the first of a PID namespace of its own", os.Getpid())
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("own /proc: make the mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("own /proc: mount: %w", err)
	}
	return nil
}

// ownProcState is whether this machine lets a child in a user namespace start a PID and
// a mount namespace and mount its /proc there, found once by trying (a container that
// masks parts of /proc refuses the mount), with the reason when it does not.
type ownProcState struct {
	ok  bool
	err string
}

var ownProcProbe = sync.OnceValue(probeOwnProc)

func probeOwnProc() ownProcState {
	if !namespaceState().ok {
		return ownProcState{err: "no user namespace for it"}
	}
	exe, err := os.Executable()
	if err != nil {
		return ownProcState{err: fmt.Sprintf("find this program to probe: %v", err)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := childproc.Command(ctx, exe)
	cmd.Env = append(os.Environ(), probeEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	isolateAttr(cmd.SysProcAttr, true)
	out, err := childproc.CombinedOutput(cmd)
	if err != nil {
		why := strings.TrimSpace(string(out))
		if why == "" {
			why = err.Error()
		}
		return ownProcState{err: why}
	}
	return ownProcState{ok: true}
}

// limitTasks sets RLIMIT_NPROC to MaxTasks where the kernel counts a user's processes in
// each user namespace apart (Linux 5.14 on, in a namespace of this process's own), and
// says why not elsewhere: a limit that counted the server's own threads, or every process
// of the user on the machine, would stop the worker itself.
func limitTasks(ownNamespaces bool) (n int, missing string, err error) {
	switch {
	case !ownNamespaces:
		return 0, "nproc: not set: without a user namespace of its own the limit would count every process of this user on the machine", nil
	case !kernelAtLeast(5, 14):
		return 0, "nproc: not set: this kernel (before 5.14) counts a user's processes across user namespaces, the server's with them", nil
	}
	lim := unix.Rlimit{Cur: MaxTasks, Max: MaxTasks}
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, &lim); err != nil {
		return 0, "", fmt.Errorf("RLIMIT_NPROC: %w", err)
	}
	if os.Getuid() == 0 {
		// The kernel exempts the machine's root (and a user namespace's root mapped to
		// it) from RLIMIT_NPROC: the limit is set but a server run as root is not bound
		// by it; without Policy.Exec the filter refuses new processes anyway.
		return MaxTasks, "nproc: set, but not enforced: the kernel exempts root (uid 0) from it; run the server as another user", nil
	}
	return MaxTasks, "", nil
}

// kernelAtLeast reports whether the running kernel's version is at least major.minor.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	release := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}
