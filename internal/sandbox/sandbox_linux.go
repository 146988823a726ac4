package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/wasmgap/wasmgap/internal/procfs"
)

// namespaceFlags are the namespaces a clone may not create inside the fence, and those
// Isolate gives a child.
const namespaceFlags = syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC |
	syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWCGROUP

var applied sync.Once

// Apply fences the calling process with p (no new privileges, Landlock, the seccomp
// filter: see the package comment) and reports which layers are in force. A layer the
// kernel lacks is reported as missing; one that the kernel offers but refuses is an
// error, and the process must not run user code then. Apply works once per process.
func Apply(p Policy) (Report, error) {
	var r Report
	err := errors.New("sandbox: Apply was called twice: the fence is applied once per process")
	applied.Do(func() { r, err = apply(p) })
	return r, err
}

func apply(p Policy) (Report, error) {
	r := Report{Namespaces: inOwnNamespaces()}
	if !r.Namespaces {
		r.Missing = append(r.Missing, "namespaces: "+namespaceState().reason())
	}
	// Its /proc was mounted when it started (enterOwnProc).
	if os.Getenv(ownProcEnv) == ownProcMounted && os.Getpid() == 1 {
		r.OwnProc = true
	} else {
		r.Missing = append(r.Missing, "own /proc: not started in a PID namespace of its own (sandbox.Isolate, where the machine allows it): other processes' /proc entries (cmdline, stat) stay readable, their memory, environment and maps only behind Landlock")
	}
	n, missing, err := limitTasks(r.Namespaces)
	if err != nil {
		return r, fmt.Errorf("sandbox: %w", err)
	}
	if r.NProc = n; missing != "" {
		r.Missing = append(r.Missing, missing)
	}
	// The filter first, so that what follows can check it on every thread in /proc before
	// Landlock hides /proc (unless Policy grants it).
	if seccomp.Supported() {
		if err := loadFilters(p); err != nil {
			return r, fmt.Errorf("sandbox: seccomp: %w", err)
		}
		if err := everyThreadFiltered(); err != nil {
			return r, fmt.Errorf("sandbox: seccomp: %w", err)
		}
		r.Seccomp, r.NoNewPrivs = true, true
	} else {
		r.Missing = append(r.Missing, "seccomp: not offered by this kernel (CONFIG_SECCOMP_FILTER)")
	}
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		r.Missing = append(r.Missing, "landlock: not offered by this kernel (CONFIG_SECURITY_LANDLOCK, lsm=landlock)")
	} else {
		if err := restrictLandlock(p); err != nil {
			return r, fmt.Errorf("sandbox: landlock: %w", err)
		}
		r.Landlock = min(abi, 11)
		r.NoNewPrivs = true // go-landlock sets it on every thread before it restricts them
	}
	if !r.NoNewPrivs {
		r.Missing = append(r.Missing, "no_new_privs: set by the seccomp and Landlock layers, neither of which is in force")
	}
	return r, nil
}

// everyThreadFiltered checks in /proc that every thread of this process has the filter
// and no_new_privs.
func everyThreadFiltered() error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		st, err := os.ReadFile("/proc/self/task/" + t.Name() + "/status")
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // the thread ended
			}
			return err
		}
		if !strings.Contains(string(st), "\nSeccomp:\t2\n") || !strings.Contains(string(st), "\nNoNewPrivs:\t1\n") {
			// TSYNC skips a thread that is exiting (the kernel may already have
			// released its filter); such a thread runs nothing more.
			if stat, err := os.ReadFile("/proc/self/task/" + t.Name() + "/stat"); err != nil || exiting(string(stat)) {
				continue
			}
			return fmt.Errorf("thread %s is not filtered after SECCOMP_FILTER_FLAG_TSYNC", t.Name())
		}
	}
	return nil
}

// exiting reports whether a task's /proc stat line has PF_EXITING in its
// flags.
func exiting(stat string) bool {
	const pfExiting = 0x4
	st, err := procfs.ParseStat([]byte(stat))
	return err == nil && st.Flags&pfExiting != 0
}

// restrictLandlock grants read access to p.Read and read and execute access to p.Exec,
// and handles every right the kernel knows: nothing else can be opened, created,
// removed or executed, no TCP port bound or connected, no signal sent out of the domain.
func restrictLandlock(p Policy) error {
	var rules []landlock.Rule
	for _, path := range p.Read {
		rules = append(rules, readRule(path, 0))
	}
	for _, path := range p.Exec {
		rules = append(rules, readRule(path, ll.AccessFSExecute))
	}
	return landlock.V11.BestEffort().Restrict(rules...)
}

// readRule grants reading path (and listing it, for a directory), plus extra.
func readRule(path string, extra landlock.AccessFSSet) landlock.Rule {
	access := landlock.AccessFSSet(ll.AccessFSReadFile) | extra
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		access |= ll.AccessFSReadDir
	}
	return landlock.PathAccess(access, path).IgnoreIfMissing()
}

// loadFilters loads the deny filter and the architecture filter, on every thread.
func loadFilters(p Policy) error {
	info, err := arch.GetInfo("")
	if err != nil {
		return err
	}
	known := func(names []string) []string {
		var out []string
		for _, n := range names {
			if _, ok := info.SyscallNames[n]; ok {
				out = append(out, n)
			}
		}
		return out
	}
	var deny []string
	for _, group := range Denied {
		deny = append(deny, known(group)...)
	}
	clone := []seccomp.NameWithConditions{{
		Name:       "clone",
		Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: namespaceFlags}},
	}}
	if len(p.Exec) == 0 {
		// Nothing to execute, so no process to start: only threads (the Go runtime's
		// clone has CLONE_THREAD).
		deny = append(deny, known([]string{"execve", "execveat", "fork", "vfork"})...)
		clone = append(clone, seccomp.NameWithConditions{
			Name:       "clone",
			Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsNotSet, Value: syscall.CLONE_THREAD}},
		})
	}
	slices.Sort(deny)
	deny = slices.Compact(deny)
	policy := seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionErrno | seccomp.Action(syscall.EPERM), Names: deny},
			{Action: seccomp.ActionErrno | seccomp.Action(syscall.ENOSYS), Names: known([]string{"clone3"})},
			{Action: seccomp.ActionErrno | seccomp.Action(syscall.EPERM), NamesWithCondtions: clone},
		},
	}
	if err := seccomp.LoadFilter(seccomp.Filter{NoNewPrivs: true, Flag: seccomp.FilterFlagTSync, Policy: policy}); err != nil {
		return err
	}
	return loadArchFilter(uint32(info.ID))
}

// loadArchFilter kills the process at any system call made through another
// architecture's calling convention: the deny filter knows this architecture's numbers
// only (go-seccomp-bpf lets other architectures through to its default action).
func loadArchFilter(id uint32) error {
	const archOffset = 4 // struct seccomp_data: int nr; __u32 arch; …
	prog, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: archOffset, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: id, SkipTrue: 1},
		bpf.RetConstant{Val: uint32(seccomp.ActionKillProcess)},
		bpf.RetConstant{Val: uint32(seccomp.ActionAllow)},
	})
	if err != nil {
		return err
	}
	filter := make([]syscall.SockFilter, len(prog))
	for i, in := range prog {
		filter[i] = syscall.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	return loadRaw(filter)
}

// inOwnNamespaces reports whether this process runs in a user namespace other than the
// machine's (whose uid_map maps every id) and a network namespace of its own.
func inOwnNamespaces() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	initial := len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295"
	return !initial && os.Getenv(isolatedEnv) == "1"
}

// isolatedEnv marks a child that Isolate started in namespaces of its own.
const isolatedEnv = "WASMGAP_SANDBOX_NAMESPACES"

// nsState is whether this machine lets this process start children in a user and a
// network namespace, found once by trying.
type nsState struct {
	ok  bool
	err error
}

func (s nsState) reason() string {
	if s.ok {
		return "this process was not started in them (sandbox.Isolate)"
	}
	return fmt.Sprintf("this machine refuses a user and a network namespace to this user (%v): unprivileged user namespaces are off (kernel.unprivileged_userns_clone, user.max_user_namespaces, an AppArmor or SELinux rule)", s.err)
}

var namespaceState = sync.OnceValue(func() nsState {
	// A child that cannot exec: if the clone and the id maps work, the exec's ENOENT is
	// the only error.
	attr := &os.ProcAttr{Sys: &syscall.SysProcAttr{}}
	isolateAttr(attr.Sys, false)
	p, err := os.StartProcess("/nonexistent/wasmgap-sandbox-probe", []string{"probe"}, attr)
	if err == nil {
		_, _ = p.Wait()
		return nsState{ok: true}
	}
	if errors.Is(err, syscall.ENOENT) {
		return nsState{ok: true}
	}
	return nsState{err: err}
})

// isolateAttr starts a child in a user and a network namespace, and with ownProc in a
// PID and a mount namespace too, with the capability to mount its /proc there (a child
// of root keeps its capabilities in its namespace; another user's child needs the one
// raised as ambient to keep it across its exec).
func isolateAttr(a *syscall.SysProcAttr, ownProc bool) {
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
	if ownProc {
		a.Cloneflags |= syscall.CLONE_NEWPID | syscall.CLONE_NEWNS
		if os.Getuid() != 0 {
			a.AmbientCaps = append(a.AmbientCaps, unix.CAP_SYS_ADMIN)
		}
	}
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	a.GidMappingsEnableSetgroups = false
}

// Isolate makes cmd start in a user namespace that maps this process's user and group to
// themselves (so the child keeps its access to this user's files but holds no capability
// outside the namespace) and an empty network namespace, when this machine allows it,
// and in a PID and a mount namespace where it also lets the child mount its /proc
// (tried once, by starting this binary: see init); it reports whether it did. Call it before the command starts; it keeps the rest of
// cmd.SysProcAttr.
func Isolate(cmd *exec.Cmd) bool {
	if !namespaceState().ok {
		return false
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	ownProc := ownProcProbe().ok
	isolateAttr(cmd.SysProcAttr, ownProc)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, isolatedEnv+"=1")
	if ownProc {
		cmd.Env = append(cmd.Env, ownProcEnv+"=1")
	}
	return true
}

// Probe reports which layers this machine offers a fenced child, without fencing
// anything: what a worker's Apply would report.
func Probe() Report {
	r := Report{Namespaces: namespaceState().ok}
	if !r.Namespaces {
		r.Missing = append(r.Missing, "namespaces: "+namespaceState().reason())
	}
	if st := ownProcProbe(); st.ok {
		r.OwnProc = true
	} else {
		r.Missing = append(r.Missing, "own /proc: this machine lets no child mount a /proc of its own in a PID namespace ("+st.err+"): other processes' /proc entries (cmdline, stat) stay readable, their memory, environment and maps only behind Landlock")
	}
	if r.Namespaces && kernelAtLeast(5, 14) {
		r.NProc = MaxTasks
	}
	if abi, err := ll.LandlockGetABIVersion(); err == nil && abi > 0 {
		r.Landlock, r.NoNewPrivs = min(abi, 11), true
	} else {
		r.Missing = append(r.Missing, "landlock: not offered by this kernel (CONFIG_SECURITY_LANDLOCK, lsm=landlock)")
	}
	if seccomp.Supported() {
		r.Seccomp, r.NoNewPrivs = true, true
	} else {
		r.Missing = append(r.Missing, "seccomp: not offered by this kernel (CONFIG_SECCOMP_FILTER)")
	}
	return r
}
