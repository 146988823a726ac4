//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childEnv turns the test binary into a fenced child that tries what a hijacked worker
// would, and reports each outcome.
const childEnv = "WASMGAP_SANDBOX_TEST_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		fencedChild(dir)
		return
	}
	os.Exit(m.Run())
}

// outcome is what the fenced child saw: the report, and each attempt's error ("" for success).
type outcome struct {
	Report   Report            `json:"report"`
	Err      string            `json:"err"`
	Attempts map[string]string `json:"attempts"`
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

func fencedChild(dir string) {
	var out outcome
	out.Report, _ = Apply(Policy{Read: []string{dir, "/proc"}})
	_, again := Apply(Policy{})
	out.Err = errText(again)
	a := map[string]string{}
	try := func(name string, f func() error) { a[name] = errText(f()) }
	// The test's own process: in a PID namespace of its own the child's parent is 0.
	parent, _ := strconv.Atoi(os.Getenv("PARENT_PID"))
	try("read given file", func() error { _, err := os.ReadFile(filepath.Join(dir, "in")); return err })
	try("read /proc/loadavg", func() error { _, err := os.ReadFile("/proc/loadavg"); return err })
	try("read other file", func() error { _, err := os.ReadFile(os.Getenv("OTHER_FILE")); return err })
	try("write given dir", func() error { return os.WriteFile(filepath.Join(dir, "out"), []byte("x"), 0o600) })
	try("chmod given file", func() error { return syscall.Chmod(filepath.Join(dir, "in"), 0o777) })
	try("socket inet", func() error {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		syscall.Close(fd)
		return err
	})
	try("socket unix", func() error {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		syscall.Close(fd)
		return err
	})
	// Were execve allowed, this child would become /bin/true and report nothing.
	try("exec", func() error { return syscall.Exec("/bin/true", []string{"true"}, nil) })
	try("ptrace parent", func() error { return syscall.PtraceAttach(parent) })
	try("signal parent", func() error { return syscall.Kill(parent, 0) })
	try("read parent environ", func() error { _, err := os.ReadFile("/proc/" + strconv.Itoa(parent) + "/environ"); return err })
	try("unshare", func() error { return syscall.Unshare(syscall.CLONE_NEWNS) })
	now := time.Now().Add(-time.Hour)
	try("utime other file", func() error { return os.Chtimes(os.Getenv("OTHER_FILE"), now, now) })
	try("utime given file", func() error { return os.Chtimes(filepath.Join(dir, "in"), now, now) })
	try("read parent cmdline", func() error { _, err := os.ReadFile("/proc/" + strconv.Itoa(parent) + "/cmdline"); return err })
	try("processes in /proc", func() error {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return err
		}
		var pids []string
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err == nil {
				pids = append(pids, e.Name())
			}
		}
		return errors.New(strings.Join(pids, " "))
	})
	try("fork", func() error { return rawFork(syscall.SYS_FORK, 0) })
	try("clone a process", func() error { return rawFork(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD)) })
	try("capabilities", func() error {
		st, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(st), "\n") {
			if k, v, _ := strings.Cut(line, ":\t"); (k == "CapPrm" || k == "CapEff" || k == "CapAmb") && strings.Trim(v, "0") != "" {
				return errors.New(line)
			}
		}
		return nil
	})
	try("nproc", func() error {
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(rlimitNProc, &lim); err != nil {
			return err
		}
		return errors.New(strconv.FormatUint(lim.Cur, 10))
	})
	try("setuid", func() error { return syscall.Setuid(12345) })
	try("every thread filtered", func() error {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		for _, t := range tasks {
			st, err := os.ReadFile("/proc/self/task/" + t.Name() + "/status")
			if err != nil {
				return err
			}
			if !strings.Contains(string(st), "Seccomp:\t2") || !strings.Contains(string(st), "NoNewPrivs:\t1") {
				return errors.New("thread " + t.Name() + " is not filtered")
			}
		}
		return nil
	})
	out.Attempts = a
	_ = json.NewEncoder(os.Stdout).Encode(out)
	os.Exit(0)
}

// rlimitNProc is RLIMIT_NPROC (linux/resource.h).
const rlimitNProc = 6

// rawFork makes a process with the system call trap (fork, or clone with flags) as Go's
// own fork does, the child ending at once; it returns the call's error.
func rawFork(trap, flags uintptr) error {
	pid, _, errno := syscall.RawSyscall6(trap, flags, 0, 0, 0, 0, 0)
	if errno != 0 {
		return errno
	}
	if pid == 0 {
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var ws syscall.WaitStatus
	_, err := syscall.Wait4(int(pid), &ws, 0, nil)
	return err
}

// runFenced starts the test binary as a fenced child (isolated when the machine allows it).
func runFenced(t *testing.T) (outcome, bool) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in"), []byte("given"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(other, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir, "OTHER_FILE="+other, "PARENT_PID="+strconv.Itoa(os.Getpid()))
	isolated := Isolate(cmd)
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("the fenced child failed: %v\n%s", err, b)
	}
	var out outcome
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("the fenced child wrote %q: %v", b, err)
	}
	return out, isolated
}

// A fenced process reads what it was given and nothing else, and every system call that
// would reach beyond its memory fails; what the machine offers is in force.
func TestFence(t *testing.T) {
	offered := Probe()
	t.Logf("this machine offers: %s", offered)
	out, isolated := runFenced(t)
	t.Logf("the child reports: %s", out.Report)
	r := out.Report
	if r.Namespaces != isolated || r.OwnProc != (isolated && offered.OwnProc) || r.NProc != offered.NProc ||
		r.Seccomp != offered.Seccomp || (r.Landlock > 0) != (offered.Landlock > 0) || r.NoNewPrivs != offered.NoNewPrivs {
		t.Errorf("in force: %s; offered: %s (isolated %v)", r, offered, isolated)
	}
	if out.Err == "" {
		t.Error("a second Apply succeeded: want it refused")
	}
	must := map[string]string{"read given file": "", "read /proc/loadavg": ""}
	perm := syscall.EPERM.Error()
	acces := syscall.EACCES.Error()
	if r.Seccomp {
		// Landlock has no right for a file's times: the filter refuses them, and a new
		// process where there is nothing to execute.
		for _, name := range []string{"socket inet", "socket unix", "ptrace parent", "unshare", "setuid", "chmod given file",
			"utime other file", "utime given file", "fork", "clone a process"} {
			must[name] = perm
		}
		must["every thread filtered"] = ""
		must["exec"] = perm
	}
	if r.Landlock > 0 {
		must["read other file"] = acces
		must["write given dir"] = acces
		must["read parent environ"] = acces
	}
	if r.Landlock >= 6 {
		must["signal parent"] = perm
	}
	if r.OwnProc {
		// No other process is there: the parent's entries do not exist, nor the parent.
		noent := syscall.ENOENT.Error()
		must["read parent cmdline"], must["read parent environ"] = noent, noent
		must["signal parent"] = syscall.ESRCH.Error()
		must["processes in /proc"] = "1"
		must["capabilities"] = "" // the mount's, dropped by the exec that follows it
	}
	if r.NProc > 0 {
		must["nproc"] = strconv.Itoa(r.NProc)
	}
	for name, want := range must {
		if got, ok := out.Attempts[name]; !ok || got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if t.Failed() {
		t.Logf("all attempts: %v", out.Attempts)
	}
}

func TestReportString(t *testing.T) {
	r := Report{NoNewPrivs: true, Landlock: 7, Seccomp: true, Missing: []string{"namespaces: off"}}
	if got, want := r.String(), "fence: no_new_privs, landlock v7, seccomp; missing: namespaces: off"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if r.Complete() {
		t.Error("Complete() = true without namespaces")
	}
}

// TestExitingThread: the flags of a /proc stat line tell an exiting thread
// (PF_EXITING), whatever its command's name holds.
func TestExitingThread(t *testing.T) {
	for _, c := range []struct {
		stat string
		want bool
	}{
		{"18660 (cat) R 18658 18658 31560 0 -1 4194304 100 0 1 0 0 0 11 12 13 14 20 0 1 0 5 0 0", false},
		{"18660 (cat) R 18658 18658 31560 0 -1 4194308 100 0 1 0 0 0 11 12 13 14 20 0 1 0 5 0 0", true},
		{"7 (a) b (c) ) S 1 7 7 0 -1 4 0 0 0 0 11 12 13 14 20 0 1 0 5 0 0", true},
		{"7 (a) b (c) ) S 1 7 7 0 -1 64 0 0 0 0 11 12 13 14 20 0 1 0 5 0 0", false},
		{"7 (short) S 1", false},
	} {
		if got := exiting(c.stat); got != c.want {
			t.Errorf("exiting(%q) = %v, want %v", c.stat, got, c.want)
		}
	}
}
