package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for the step's and progress's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A silent step gets status lines naming what it does and why; its output goes to
// standard error (nothing on standard output, which a task's table may be) and its exit
// status passes through.
func TestSilentStepGetsStatusLines(t *testing.T) {
	var stdout, stderr syncBuffer
	code := run([]string{"-what", "compiling things", "-why", "first build", "-quiet", "50ms", "-every", "50ms", "--",
		"sh", "-c", "echo begun; sleep 1; echo ended; exit 3"}, &stdout, &stderr)
	if code != 3 {
		t.Errorf("exit %d, want the step's 3", code)
	}
	if got := stdout.String(); got != "" {
		t.Errorf("progress wrote %q on standard output, want nothing there", got)
	}
	said := stderr.String()
	if !strings.Contains(said, "\nbegun\n") || !strings.Contains(said, "\nended\n") {
		t.Errorf("the step's output is not on standard error: %q", said)
	}
	if !strings.HasPrefix(said, "==> compiling things\n") {
		t.Errorf("stderr does not open with what is built: %q", said)
	}
	if n := strings.Count(said, "    still compiling things (first build), "); n < 2 {
		t.Errorf("%d status lines over a 1 s silence with -every 50ms, want several:\n%s", n, said)
	}
	if !strings.Contains(said, "==> compiling things: failed after ") {
		t.Errorf("no failure line:\n%s", said)
	}
}

// A step that keeps printing needs no status line; success is said with the time taken.
func TestTalkativeStepGetsNone(t *testing.T) {
	var stdout, stderr syncBuffer
	code := run([]string{"-what", "talking", "-quiet", "400ms", "-every", "400ms", "--",
		"sh", "-c", "for i in 1 2 3 4 5 6 7 8; do echo $i; sleep 0.1; done"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	said := stderr.String()
	if strings.Contains(said, "still talking") {
		t.Errorf("status line while the step talked:\n%s", said)
	}
	if !strings.Contains(said, "==> talking: done in ") {
		t.Errorf("no done line:\n%s", said)
	}
}

func TestBadUse(t *testing.T) {
	for _, args := range [][]string{{}, {"-what", "x"}, {"--", "true"}, {"-what", "x", "-every", "0s", "--", "true"}} {
		var stdout, stderr syncBuffer
		if code := run(args, &stdout, &stderr); code != 2 || stderr.String() == "" {
			t.Errorf("progress %q: exit %d, stderr %q; want 2 and a reason", args, code, stderr.String())
		}
	}
	var stdout, stderr syncBuffer
	if code := run([]string{"-what", "x", "--", "/no/such/program"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "cannot start") {
		t.Errorf("missing program: exit %d, stderr %q", code, stderr.String())
	}
}
