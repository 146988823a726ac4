// Package sandbox fences a process that runs user code, so that code which escapes its
// language (a memory-corrupting bug in an interpreter, a hijacked worker) still reaches
// nothing but its own memory, its pipes and the files it was given.
//
// The fence has these layers, each applied where the kernel offers it, and Report says
// which are in force:
//
//   - namespaces (Isolate, in the parent, at the child's start): a user namespace that
//     maps the child's user to itself, so it holds no capability over the machine, and an
//     empty network namespace (no interface but a loopback that is down); where the
//     machine lets the child mount a /proc of its own, a PID and a mount namespace too,
//     and Apply mounts that /proc, which shows no other process;
//   - no capabilities (capset on every thread), and at most MaxTasks processes and threads
//     (RLIMIT_NPROC) where the kernel counts them in the child's own user namespace;
//   - no new privileges (prctl PR_SET_NO_NEW_PRIVS): no setuid binary, no file
//     capability, raises what the process may do;
//   - Landlock (github.com/landlock-lsm/go-landlock, best effort): no file is readable,
//     writable or executable beyond Policy, no TCP bind or connect, no signal or abstract
//     Unix socket reaches a process outside the fence;
//   - a seccomp-bpf filter on every thread (github.com/elastic/go-seccomp-bpf, pure Go,
//     SECCOMP_FILTER_FLAG_TSYNC): the system calls a computation never needs fail with
//     EPERM (Denied lists them; without Policy.Exec, a new process too), and a process
//     that switches to another architecture's calls (int 0x80 on x86-64) is killed.
//
// Apply applies the last three to the calling process, once and for good; call it after
// the process has read its inputs and before user code runs.
package sandbox

import (
	"fmt"
	"strings"
)

// Policy is what a fenced process may still reach besides its memory and the files it
// has open.
type Policy struct {
	// Read are files and directories (with everything beneath) it may read.
	Read []string
	// Exec are files and directories whose files it may read and execute; when empty,
	// execve, fork, vfork and a clone that makes a process (not a thread) are refused
	// outright.
	Exec []string
}

// MaxTasks is the RLIMIT_NPROC of a fenced process: the processes and threads its user
// may have in its user namespace. A Go worker uses tens of threads.
const MaxTasks = 256

// Report says which layers of the fence are in force in a process, and why the others
// are not.
type Report struct {
	// Namespaces is true when the process runs in a user and a network namespace of its own.
	Namespaces bool `json:"namespaces"`
	// OwnProc is true when it runs in a PID namespace of its own with its own /proc: no
	// other process is there to see.
	OwnProc bool `json:"own_proc"`
	// NProc is the RLIMIT_NPROC set (MaxTasks), 0 when none is.
	NProc int `json:"nproc,omitempty"`
	// NoNewPrivs is true when no_new_privs is set on every thread.
	NoNewPrivs bool `json:"no_new_privs"`
	// Landlock is the Landlock ABI version whose rights are enforced, 0 for none.
	Landlock int `json:"landlock"`
	// Seccomp is true when the system-call filter is in force on every thread.
	Seccomp bool `json:"seccomp"`
	// Missing says, for each layer not in force, why.
	Missing []string `json:"missing,omitempty"`
}

// String renders the report on one line: "namespaces, own /proc, nproc 256,
// no_new_privs, landlock v7, seccomp", then what is missing.
func (r Report) String() string {
	var on []string
	if r.Namespaces {
		on = append(on, "namespaces")
	}
	if r.OwnProc {
		on = append(on, "own /proc")
	}
	if r.NProc > 0 {
		on = append(on, fmt.Sprintf("nproc %d", r.NProc))
	}
	if r.NoNewPrivs {
		on = append(on, "no_new_privs")
	}
	if r.Landlock > 0 {
		on = append(on, fmt.Sprintf("landlock v%d", r.Landlock))
	}
	if r.Seccomp {
		on = append(on, "seccomp")
	}
	s := "fence: " + strings.Join(on, ", ")
	if len(on) == 0 {
		s = "fence: none"
	}
	if len(r.Missing) > 0 {
		s += "; missing: " + strings.Join(r.Missing, "; ")
	}
	return s
}

// Complete reports whether every layer is in force.
func (r Report) Complete() bool {
	return r.Namespaces && r.OwnProc && r.NProc > 0 && r.NoNewPrivs && r.Landlock > 0 && r.Seccomp
}

// Denied are the system calls the filter refuses (with EPERM), by group, as Linux names
// them; a name the architecture lacks is skipped. execve and execveat are refused too
// when Policy.Exec is empty, clone3 fails with ENOSYS (so that clone, whose flags the
// filter can read, is used instead), and clone is refused when it asks for a namespace.
var Denied = map[string][]string{
	"network":    {"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4"},
	"processes":  {"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "process_madvise"},
	"namespaces": {"unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr"},
	"kernel": {"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
		"keyctl", "add_key", "request_key", "kexec_load", "kexec_file_load", "init_module", "finit_module",
		"delete_module", "reboot", "swapon", "swapoff", "syslog", "acct", "quotactl", "quotactl_fd",
		"lookup_dcookie", "vhangup", "iopl", "ioperm", "fanotify_init", "open_by_handle_at", "name_to_handle_at"},
	"clock":       {"settimeofday", "clock_settime", "clock_adjtime", "adjtimex"},
	"identity":    {"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid", "setfsgid", "setgroups", "capset"},
	"file owners": {"chown", "fchown", "lchown", "fchownat", "chmod", "fchmod", "fchmodat", "fchmodat2", "mknod", "mknodat"},
	"attributes":  {"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "setxattrat", "removexattrat"},
	// Landlock has no right for a file's times (its truncate and ioctl rights do not
	// cover them), and a fenced process may write no file: none of its calls is needed.
	"file times": {"utime", "utimes", "utimensat", "futimesat"},
}
