package explain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/wasmgap/wasmgap/internal/capped"
	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/kernels"
)

// childEnv marks a process started by InChild: this binary, explaining one request.
const childEnv = "WASMGAP_EXPLAIN_CHILD"

// maxChildOutput bounds a child's report (a listing of every trace of every engine is a
// few megabytes).
const maxChildOutput = 64 << 20

// childRequest is what InChild sends its child on stdin.
type childRequest struct {
	Kernel      string        `json:"kernel"`
	Args        []int         `json:"args"`
	Engines     []string      `json:"engines"`
	WarmupTime  time.Duration `json:"warmup_time"`
	Profile     bool          `json:"profile"`
	ProfileTime time.Duration `json:"profile_time"`
}

// ServeChildIfRequested makes this process an explain child when InChild started it:
// it reads the request on stdin, writes the report as JSON on stdout and exits. A program
// that calls InChild calls it first thing in main (and a test binary in TestMain).
func ServeChildIfRequested() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	os.Exit(serveChild(os.Stdin, os.Stdout, os.Stderr))
}

func serveChild(in io.Reader, out, errw io.Writer) int {
	var req childRequest
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		fmt.Fprintf(errw, "explain child: read the request: %v\n", err)
		return 2
	}
	k, err := kernels.Lookup(req.Kernel)
	if err != nil {
		fmt.Fprintf(errw, "explain child: %v\n", err)
		return 2
	}
	rep, err := Explain(context.Background(), k, req.Args, req.Engines,
		Options{WarmupTime: req.WarmupTime, Profile: req.Profile, ProfileTime: req.ProfileTime})
	if err != nil {
		fmt.Fprintf(errw, "explain child: %v\n", err)
		return 2
	}
	if err := json.NewEncoder(out).Encode(rep); err != nil {
		fmt.Fprintf(errw, "explain child: %v\n", err)
		return 1
	}
	return 0
}

// ErrTimeout is returned (wrapped) by InChild when the child did not finish in time.
var ErrTimeout = errors.New("timed out")

// InChild explains as Explain does, in a child process (this same binary, which must call
// ServeChildIfRequested), killed when ctx ends or after timeout: the native engine and
// wazero run the kernel in the explaining process, where a call cannot be interrupted, so
// a server never runs them in its own.
func InChild(ctx context.Context, k *kernels.Kernel, args []int, engines []string, opts Options, timeout time.Duration) (*Report, error) {
	if err := k.Check(args); err != nil {
		return nil, err
	}
	if err := CheckEngines(engines); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("explain: find this program: %w", err)
	}
	body, err := json.Marshal(childRequest{Kernel: k.Name, Args: args, Engines: engines,
		WarmupTime: opts.WarmupTime, Profile: opts.Profile, ProfileTime: opts.ProfileTime})
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stdin = bytes.NewReader(body)
	stdout := &capped.Buffer{Head: maxChildOutput}
	stderr := &capped.Buffer{Head: 16 << 10, Tail: 16 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := childproc.Start(cmd); err != nil {
		return nil, fmt.Errorf("explain: start the child: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err = <-done:
	case <-timer.C:
		_ = childproc.KillGroup(cmd)
		<-done
		return nil, fmt.Errorf("explain %s on %v: %w after %s", k.Label(args), engines, ErrTimeout, timeout)
	case <-ctx.Done():
		_ = childproc.KillGroup(cmd)
		<-done
		return nil, fmt.Errorf("explain %s: %w", k.Label(args), context.Cause(ctx))
	}
	if err != nil {
		return nil, fmt.Errorf("explain %s: the child failed: %w%s", k.Label(args), err, firstLineOf(stderr.String()))
	}
	out := stdout.String()
	if len(out) >= maxChildOutput {
		return nil, fmt.Errorf("explain %s: the report is over %d MiB", k.Label(args), maxChildOutput>>20)
	}
	var rep Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		return nil, fmt.Errorf("explain %s: read the child's report: %w", k.Label(args), err)
	}
	return &rep, nil
}
