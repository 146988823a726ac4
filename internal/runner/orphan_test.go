package runner

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// startRawWorker starts this test binary as a worker on a never-ending job, fib_rec(60)
// natively, and returns it once it reports progress, with its stdin still open.
func startRawWorker(t *testing.T, timeout time.Duration) (*exec.Cmd, *os.File, *strings.Builder) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = stdinR
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := new(strings.Builder)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdinR.Close()
	t.Cleanup(func() { cmd.Process.Kill(); stdinW.Close() })
	job, _ := json.Marshal(wireJob{Engine: "native", Kernel: "fib_rec", Args: []int{60}, Timeout: timeout})
	if _, err := stdinW.Write(append(job, '\n')); err != nil {
		t.Fatal(err)
	}
	// The first line is progress: the worker runs.
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("the worker wrote nothing: %v (stderr %q)", err, stderr)
	}
	go func() { _, _ = bufio.NewReader(stdout).WriteTo(nopWriter{}) }()
	return cmd, stdinW, stderr
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// waitExit waits for the worker to end by itself, within limit, and returns its status.
func waitExit(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("worker ended with %v, want an exit status", err)
		}
		return exit.ExitCode()
	case <-time.After(limit):
		t.Fatalf("the worker still runs %v later", limit)
		return 0
	}
}

// A worker whose parent is gone (its stdin reaches its end) stops, mid-run.
func TestWorkerStopsWhenParentGoes(t *testing.T) {
	cmd, stdin, stderr := startRawWorker(t, time.Hour)
	stdin.Close()
	if code := waitExit(t, cmd, 20*time.Second); code != exitOrphaned || !strings.Contains(stderr.String(), "parent process is gone") {
		t.Errorf("exit status %d, stderr %q; want %d and the reason", code, stderr, exitOrphaned)
	}
}

// A worker still running well past its job's time limit stops by itself, even with its
// parent alive.
func TestWorkerStopsPastItsTimeLimit(t *testing.T) {
	cmd, _, stderr := startRawWorker(t, time.Second)
	if code := waitExit(t, cmd, workerMargin+30*time.Second); code != exitOverdue || !strings.Contains(stderr.String(), "time limit") {
		t.Errorf("exit status %d, stderr %q; want %d and the reason", code, stderr, exitOverdue)
	}
}
