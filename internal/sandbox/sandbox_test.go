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
	parent := os.Getppid()
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
	cmd.Env = append(os.Environ(), childEnv+"="+dir, "OTHER_FILE="+other)
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
	if r.Namespaces != isolated || r.Seccomp != offered.Seccomp || (r.Landlock > 0) != (offered.Landlock > 0) || r.NoNewPrivs != offered.NoNewPrivs {
		t.Errorf("in force: %s; offered: %s (isolated %v)", r, offered, isolated)
	}
	if out.Err == "" {
		t.Error("a second Apply succeeded: want it refused")
	}
	must := map[string]string{"read given file": "", "read /proc/loadavg": ""}
	perm := syscall.EPERM.Error()
	acces := syscall.EACCES.Error()
	if r.Seccomp {
		for _, name := range []string{"socket inet", "socket unix", "ptrace parent", "unshare", "setuid", "chmod given file"} {
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
