// Command progress runs one step of a task and keeps it talkative: it says what is being
// built before the step starts, passes the step's own output through to standard error,
// and after a few seconds of silence from the step prints a status line every few seconds
// ("still compiling wasmgap (first build: ~2 min), 35s"), then how long the step took.
//
// The Taskfile runs its long steps through it (go tool task), so that a first run on empty
// Go caches, which compiles every dependency, never looks hung:
//
//	go run ./scripts/progress -what "compiling wasmgap" -why "first build: ~2 min" -- go build ./cmd/wasmgap
//
// The step's exit status is progress's; SIGINT and SIGTERM are passed on to it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("progress", flag.ContinueOnError)
	fs.SetOutput(stderr)
	what := fs.String("what", "", "what the step does, as in \"compiling wasmgap\" (required)")
	why := fs.String("why", "", "why it may take long, said in the status lines, e.g. \"first build: ~2 min\"")
	quiet := fs.Duration("quiet", 5*time.Second, "silence from the step before the first status line")
	every := fs.Duration("every", 5*time.Second, "interval of the status lines while the step stays silent")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: progress -what TEXT [-why TEXT] [-quiet D] [-every D] -- command [args...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *what == "" || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "progress: give -what and the command after --")
		return 2
	}
	if *quiet <= 0 || *every <= 0 {
		fmt.Fprintln(stderr, "progress: -quiet and -every must be positive durations")
		return 2
	}

	s := &step{what: *what, why: *why, stderr: stderr, began: time.Now()}
	s.last = s.began
	s.say("==> %s", *what)

	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdin = os.Stdin
	// A build step's output is for the person watching, never a task's product: it goes
	// to standard error, so that a task whose standard output is a table (bench-peers,
	// which docs-tables splices into docs/BENCHMARKS.md) holds the table alone.
	cmd.Stdout = &watched{w: stderr, s: s}
	cmd.Stderr = &watched{w: stderr, s: s}
	if err := cmd.Start(); err != nil {
		s.say("==> %s: cannot start %s: %v", *what, fs.Arg(0), err)
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var tick <-chan time.Time
	first := time.NewTimer(*quiet)
	defer first.Stop()
	for {
		select {
		case sig := <-sigs:
			cmd.Process.Signal(sig)
		case <-first.C:
			t := time.NewTicker(*every)
			defer t.Stop()
			tick = t.C
			s.status(*quiet)
		case <-tick:
			s.status(*every)
		case err := <-done:
			took := time.Since(s.began).Round(100 * time.Millisecond)
			if err != nil {
				code := 1
				var exit *exec.ExitError
				if errors.As(err, &exit) && exit.ExitCode() > 0 {
					code = exit.ExitCode()
				}
				s.say("==> %s: failed after %v (%v)", *what, took, err)
				return code
			}
			s.say("==> %s: done in %v", *what, took)
			return 0
		}
	}
}

// step is the state of the step being run: when it began and when it last printed.
type step struct {
	what, why string
	began     time.Time

	mu     sync.Mutex
	stderr io.Writer
	last   time.Time // the step's last output, or our last status line
}

// say prints one line of progress's own on stderr.
func (s *step) say(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.stderr, format+"\n", args...)
}

// status prints a status line when the step has been silent for at least quiet.
func (s *step) status(quiet time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if now.Sub(s.last) < quiet-quiet/10 {
		return
	}
	why := ""
	if s.why != "" {
		why = " (" + s.why + ")"
	}
	fmt.Fprintf(s.stderr, "    still %s%s, %v\n", s.what, why, now.Sub(s.began).Round(time.Second))
	s.last = now
}

// watched passes the step's output through and records when it last wrote.
type watched struct {
	w io.Writer
	s *step
}

func (w *watched) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.last = time.Now()
	return w.w.Write(p)
}
