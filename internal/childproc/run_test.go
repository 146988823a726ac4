//go:build linux

package childproc

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// CombinedOutput starts its command as Start does (its own group, the parent-death
// signal) and returns both streams.
func TestCombinedOutput(t *testing.T) {
	cmd := Command(context.Background(), "sh", "-c", "echo out; echo err >&2")
	out, err := CombinedOutput(cmd)
	if err != nil || string(out) != "out\nerr\n" {
		t.Errorf("CombinedOutput = %q, %v", out, err)
	}
	if a := cmd.SysProcAttr; a == nil || !a.Setpgid || a.Pdeathsig != syscall.SIGKILL {
		t.Errorf("attributes %+v: want Setpgid and Pdeathsig set", a)
	}
	if _, err := CombinedOutput(exec.Command("false")); err == nil {
		t.Error("CombinedOutput(false) = nil error")
	}
	busy := exec.Command("true")
	busy.Stdout = new(strings.Builder)
	if _, err := CombinedOutput(busy); err == nil {
		t.Error("CombinedOutput of a command with Stdout set: no error")
	}
}

// The end of Command's context kills the whole group: a grandchild too.
func TestCommandCancelKillsGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := Command(ctx, "sh", "-c", grandchildScript)
	grandchild := startWithGrandchild(t, cmd)
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Error("Wait after cancel = nil, want the kill")
	}
	deadline := time.Now().Add(30 * time.Second)
	for alive(grandchild) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still runs 30 s after the context ended", grandchild)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
