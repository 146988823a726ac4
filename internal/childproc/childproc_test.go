//go:build linux

package childproc

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A child started by Start leads a process group of its own, and KillGroup ends the
// grandchildren it started too.
func TestKillGroupEndsGrandchildren(t *testing.T) {
	cmd := exec.Command("sh", "-c", grandparent)
	grandchild := startGrandparent(t, cmd)
	if pgid, err := syscall.Getpgid(cmd.Process.Pid); err != nil || pgid != cmd.Process.Pid {
		t.Errorf("the child's process group is %d (%v), want its own, %d", pgid, err, cmd.Process.Pid)
	}
	if err := KillGroup(cmd); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for alive(grandchild) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still runs 30 s after KillGroup", grandchild)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Start keeps the attributes a caller set.
func TestStartKeepsAttributes(t *testing.T) {
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Ctty: 5} // read only with Setctty or Foreground: a harmless mark
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if a := cmd.SysProcAttr; a.Ctty != 5 || !a.Setpgid || a.Pdeathsig != syscall.SIGKILL {
		t.Errorf("attributes %+v: want Ctty kept, Setpgid and Pdeathsig set", a)
	}
}

func TestKillGroupNotStarted(t *testing.T) {
	if err := KillGroup(exec.Command("true")); err != nil {
		t.Errorf("KillGroup of a command never started = %v, want nil", err)
	}
}

// grandparent is a shell that starts a grandchild, says its pid and waits for it.
const grandparent = "sleep 60 & echo $!; wait"

// startGrandparent starts cmd (a shell running grandparent) with Start and opts, and
// returns the grandchild's pid.
func startGrandparent(t *testing.T, cmd *exec.Cmd, opts ...Option) int {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(cmd, opts...); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	grandchild, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		t.Fatalf("the child said %q, want the grandchild's pid", buf[:n])
	}
	return grandchild
}

// alive reports whether pid runs (a zombie, which no init reaps in some containers, is
// not running).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// A child started with Idle runs under SCHED_IDLE at nice 19, and so does what it starts;
// a child started without it keeps the normal policy.
func TestStartIdle(t *testing.T) {
	cmd := exec.Command("sh", "-c", grandparent)
	grandchild := startGrandparent(t, cmd, Idle)
	defer func() { KillGroup(cmd); cmd.Wait() }()
	for _, pid := range []int{cmd.Process.Pid, grandchild} {
		if policy, nice := schedOf(t, pid); policy != unix.SCHED_IDLE || nice != 19 {
			t.Errorf("process %d: policy %d, nice %d; want SCHED_IDLE (%d) and 19", pid, policy, nice, unix.SCHED_IDLE)
		}
	}

	plain := exec.Command("sleep", "60")
	if err := Start(plain); err != nil {
		t.Fatal(err)
	}
	defer func() { KillGroup(plain); plain.Wait() }()
	if policy, _ := schedOf(t, plain.Process.Pid); policy == unix.SCHED_IDLE {
		t.Errorf("a child started without Idle runs under SCHED_IDLE")
	}
}

// schedOf reads a process's scheduling policy and nice value from /proc/PID/stat.
func schedOf(t *testing.T, pid int) (policy, nice int) {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command's closing parenthesis start at field 3 (state): nice is
	// field 19, policy field 41.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	nice, _ = strconv.Atoi(f[19-3])
	policy, _ = strconv.Atoi(f[41-3])
	return policy, nice
}
