package runner

import (
	"bufio"
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
	"github.com/wasmgap/wasmgap/internal/sandbox"
)

// workerCall is one worker process as Run and RunWarmup start it: this program again,
// with workerEnv set to role, the job as one line on its stdin and its answer as lines
// on its stdout.
type workerCall struct {
	role    string
	input   []byte
	timeout time.Duration
	// isolate puts the worker in namespaces of its own (user code).
	isolate bool
	// out receives the worker's stdout; its lines are flushed after the worker ends.
	out *lineWriter
}

// workerEnd is how a worker process ended.
type workerEnd struct {
	// waitErr is the error of its Wait (its exit status, or the kill).
	waitErr error
	// timedOut says the worker was killed at the time limit.
	timedOut bool
	// stderr is the kept head and tail of its stderr.
	stderr string
}

// startWorker runs one worker to its end. The error is one of starting it, or the
// context's; how the worker itself ended is in workerEnd.
func startWorker(ctx context.Context, c workerCall) (workerEnd, error) {
	exe, err := os.Executable()
	if err != nil {
		return workerEnd{}, fmt.Errorf("find this program to start a worker: %w", err)
	}
	runCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, exe)
	cmd.Env = append(os.Environ(), workerEnv+"="+c.role)
	// The job goes down a pipe that stays open while the worker runs: the worker takes its
	// end of file as the sign that this process is gone. Wait closes it.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return workerEnd{}, fmt.Errorf("start worker: %w", err)
	}
	if c.isolate {
		// User code: a user and a network namespace of its own where the machine allows
		// them; the worker fences itself further before the code runs (serveWorker).
		sandbox.Isolate(cmd)
	}
	// A process group of its own that dies with this process (package childproc).
	cmd.Cancel = func() error { return childproc.KillGroup(cmd) }
	cmd.WaitDelay = killGrace
	cmd.Stdout = c.out
	stderr := &capped.Buffer{Head: stderrKeep, Tail: stderrKeep}
	cmd.Stderr = stderr
	if err := childproc.Start(cmd); err != nil {
		return workerEnd{}, fmt.Errorf("start worker: %w", err)
	}
	workersStarted.Add(1)
	// A worker that died before reading its job makes this write fail; Wait says why.
	_, _ = stdin.Write(append(c.input, '\n'))
	waitErr := cmd.Wait()
	c.out.flush()
	if err := ctx.Err(); err != nil {
		return workerEnd{}, err
	}
	return workerEnd{
		waitErr:  waitErr,
		timedOut: errors.Is(runCtx.Err(), context.DeadlineExceeded),
		stderr:   stderr.String(),
	}, nil
}

// serveRole serves one job of the worker role and exits, when this process was started
// as a worker of that role (workerEnv); otherwise it returns at once.
func serveRole(role string, serve func(in io.Reader, out io.Writer, exit func(int)) error) {
	if os.Getenv(workerEnv) != role {
		return
	}
	if err := serve(os.Stdin, os.Stdout, os.Exit); err != nil {
		fmt.Fprintf(os.Stderr, "wasmgap %s worker: %v\n", role, err)
		os.Exit(3)
	}
	os.Exit(0)
}

// readJob reads a worker's job: the first line of in, as JSON. The reader stays with the
// worker, whose end of file says the parent is gone.
func readJob[T any](in io.Reader) (*bufio.Reader, T, error) {
	var job T
	br := bufio.NewReader(in)
	line, err := br.ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return nil, job, fmt.Errorf("read job: %w", err)
	}
	if err := json.Unmarshal(line, &job); err != nil {
		return nil, job, fmt.Errorf("read job: %w", err)
	}
	return br, job, nil
}
