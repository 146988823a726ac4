package custom

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/engine"
	"github.com/wasmgap/wasmgap/internal/capped"
	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/kernels"
)

// nativeEngine runs a natively built user kernel: its executable, started once, reads one
// call's arguments per line and answers the value. The times it reports include that
// round trip through two pipes (tens of microseconds), unlike the catalogue's native
// engine, which calls the kernel in-process.
type nativeEngine struct {
	k      *Kernel
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *capped.Buffer
}

func (e *nativeEngine) Name() string { return engine.Native }

// Load starts the executable, in the worker's process group and under its limits.
func (e *nativeEngine) Load(ctx context.Context) (engine.Setup, error) {
	start := time.Now()
	if err := e.start(); err != nil {
		return engine.Setup{}, err
	}
	return engine.Setup{Instantiate: time.Since(start)}, nil
}

func (e *nativeEngine) start() error {
	cmd := exec.Command(e.k.NativePath())
	cmd.Env = []string{}
	cmd.Dir = e.k.Dir
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	e.stderr = &capped.Buffer{Head: 4 << 10}
	cmd.Stderr = e.stderr
	// It dies with the worker that started it, whatever ends the worker (package childproc).
	if err := childproc.Start(cmd); err != nil {
		return fmt.Errorf("native: start %s: %w", e.k.Func.Name, err)
	}
	e.cmd, e.in, e.out = cmd, in, bufio.NewReader(out)
	return nil
}

// Run sends args and reads the value; a process that dies is reported with what it
// printed, and replaced for the next call.
func (e *nativeEngine) Run(ctx context.Context, k *kernels.Kernel, args []int) (int64, error) {
	if e.cmd == nil {
		if err := e.start(); err != nil {
			return 0, err
		}
	}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = strconv.Itoa(a)
	}
	if _, err := io.WriteString(e.in, strings.Join(parts, " ")+"\n"); err != nil {
		return 0, e.died(k, args)
	}
	line, err := e.out.ReadString('\n')
	if err != nil {
		return 0, e.died(k, args)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("native: %s: the kernel wrote %q", k.Label(args), line)
	}
	return v, nil
}

// died reports why the process ended and forgets it.
func (e *nativeEngine) died(k *kernels.Kernel, args []int) error {
	_ = e.in.Close()
	_ = e.cmd.Wait()
	said := strings.TrimSpace(e.stderr.String())
	e.cmd = nil
	if strings.Contains(said, "goroutine stack exceeds") || strings.Contains(said, "stack overflow") {
		return fmt.Errorf("native: %s: %w", k.Label(args), engine.ErrStackOverflow)
	}
	if i := strings.Index(said, "\n\n"); i > 0 {
		said = said[:i]
	}
	if said == "" {
		return errors.New("native: " + k.Label(args) + ": the kernel's process ended")
	}
	return fmt.Errorf("native: %s: %s", k.Label(args), said)
}

// Close ends the executable.
func (e *nativeEngine) Close(context.Context) error {
	if e.cmd == nil {
		return nil
	}
	_ = e.in.Close()
	done := make(chan struct{})
	go func() { _ = e.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		_ = childproc.KillGroup(e.cmd)
		<-done
	}
	e.cmd = nil
	return nil
}
