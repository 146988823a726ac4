package driver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wasmgap/wasmgap/internal/capped"
	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/kernels"
)

// MaxReps is the largest number of calls one Call may ask for.
const MaxReps = 1_000_000_000

// closeGrace is how long Close waits for a driver to exit after its stdin is closed.
const closeGrace = 2 * time.Second

// Process is a running driver. Its methods may be called from several goroutines; calls
// are served one at a time.
type Process struct {
	// Name is the peer's name: "c", "java", ...
	Name string
	// Language and Runtime are what the driver's ready line says: "c" and "gcc 12.2.0".
	Language, Runtime string
	// Setup is what starting the driver cost.
	Setup Setup
	// PID is the driver's process id (0 for a driver that runs inside this process), so
	// that a profiler can sample it.
	PID int

	mu     sync.Mutex
	stdin  io.WriteCloser
	lines  chan string   // the driver's stdout, a line at a time; closed at EOF
	exited chan struct{} // closed once the driver is gone and exitErr is set
	// exitErr is why the driver ended: nil for a clean exit after stdin closed.
	exitErr error
	kill    func()
	stderr  *Tail
	cleanup func()
	broken  error // why no more calls can be served

	closed    atomic.Bool
	drainOnce sync.Once
	closeOnce sync.Once
	closeErr  error
}

// Conn is a started driver, before its ready line: the pipes and how to stop it. A driver
// that is a process is started by Command; one that runs inside this process (a wasm
// module on wazero, reading WASI's stdin) makes its own Conn and Attaches it.
type Conn struct {
	// Stdin is where requests are written; Close ends the driver.
	Stdin io.WriteCloser
	// Stdout is where answers are read.
	Stdout io.Reader
	// Wait blocks until the driver has ended, after Stdout has been read to EOF.
	Wait func() error
	// Kill ends the driver now.
	Kill func()
}

// Attach makes a Process of a started driver and waits for nothing: call Ready next.
// stderr is what the driver writes to its standard error (NewTail); cleanup, if not nil,
// runs at Close.
func Attach(name string, c Conn, stderr *Tail, cleanup func()) *Process {
	p := &Process{
		Name:    name,
		stdin:   c.Stdin,
		lines:   make(chan string, 1),
		exited:  make(chan struct{}),
		kill:    c.Kill,
		stderr:  stderr,
		cleanup: cleanup,
	}
	go func() {
		sc := bufio.NewScanner(c.Stdout)
		sc.Buffer(make([]byte, 4096), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		// Wait for the driver only after its stdout is drained, as exec.Cmd requires;
		// a driver that closed stdout but lives on is killed.
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			p.exitErr = err
		case <-time.After(closeGrace):
			c.Kill()
			p.exitErr = <-done
		}
		close(p.exited)
	}()
	return p
}

// Command starts the driver program argv[0] with its arguments in dir, and waits for its
// ready line. Its standard error is copied to stderr when that is not nil (the start and
// the end are kept for errors anyway); env, when not nil, is its whole environment.
func Command(ctx context.Context, name string, argv []string, dir string, env []string, stderr io.Writer) (*Process, error) {
	p, err := command(name, argv, dir, env, stderr, nil)
	if err != nil {
		return nil, err
	}
	if err := p.Ready(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func command(name string, argv []string, dir string, env []string, w, stdout io.Writer) (*Process, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	stderr := NewTail(w)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var answers io.ReadCloser
	var protocol *os.File // the write end of a protocol on fd 3, closed here once started
	if stdout == nil {
		if answers, err = cmd.StdoutPipe(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	} else {
		// The answers on a pipe of their own (the driver's fd 3), its stdout to stdout.
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		answers, protocol = r, w
		cmd.Stdout = stdout
		cmd.ExtraFiles = []*os.File{w}
		if env == nil {
			env = os.Environ()
		}
		cmd.Env = append(slices.Clip(env), ProtocolFDEnv+"=3")
	}
	// A process group of its own, so that a kill also ends what the driver started and
	// frees its output pipe, and a driver that dies with the process that started it: a
	// worker killed at its time limit takes its driver with it (package childproc).
	err = childproc.Start(cmd)
	if protocol != nil {
		protocol.Close()
	}
	if err != nil {
		if protocol != nil {
			answers.Close()
		}
		return nil, fmt.Errorf("%s: start %s: %w", name, argv[0], err)
	}
	wait := cmd.Wait
	if protocol != nil {
		wait = func() error { defer answers.Close(); return cmd.Wait() }
	}
	c := Conn{
		Stdin:  stdin,
		Stdout: answers,
		Wait:   wait,
		Kill:   func() { childproc.KillGroup(cmd) },
	}
	p := Attach(name, c, stderr, nil)
	p.PID = cmd.Process.Pid
	return p, nil
}

// ProtocolFDEnv names the file descriptor a driver answers on when Built.Stdout is set
// (3): a driver that honours it (node-wasm's) writes its protocol there, and its runtime's
// own stdout, which V8's --print-wasm-code writes to from any thread, cannot break it.
const ProtocolFDEnv = "WASMGAP_DRIVER_FD"

// Ready waits for the driver's ready line and fills in Language and Runtime.
func (p *Process) Ready(ctx context.Context) error {
	line, err := p.readLine(ctx, "start")
	if err != nil {
		return err
	}
	f := strings.SplitN(line, " ", 3)
	if len(f) < 3 || f[0] != "ready" {
		p.stop()
		return fmt.Errorf("%s: the driver's first line is %q, want \"ready <language> <runtime version>\"%s", p.Name, line, p.stderr.Quote())
	}
	p.Language, p.Runtime = f[1], f[2]
	return nil
}

// Call asks the driver to call the catalogue's kernel reps times with args (in the order
// of the kernel's parameters), and returns the first value, the sum of all values and the
// time the calls took (CallKernel).
func (p *Process) Call(ctx context.Context, kernel string, reps int, args []int) (Result, error) {
	k, err := kernels.Lookup(kernel)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", p.Name, err)
	}
	return p.CallKernel(ctx, k, reps, args)
}

// CallKernel asks the driver to call k (the catalogue's, or a user's kernel that a driver
// serves under k.Name) reps times with args, and returns the first value, the sum of all
// values and the time the calls took. The arguments are checked against k's parameters
// before they are sent. When ctx ends first, the driver is killed and every later call
// fails with ErrExited.
func (p *Process) CallKernel(ctx context.Context, k *kernels.Kernel, reps int, args []int) (Result, error) {
	if err := k.Check(args); err != nil {
		return Result{}, fmt.Errorf("%s: %w", p.Name, err)
	}
	if reps < 1 || reps > MaxReps {
		return Result{}, fmt.Errorf("%s: reps = %d is out of range: allowed 1 to %d", p.Name, reps, MaxReps)
	}
	fields := []string{k.Name, strconv.Itoa(reps)}
	for _, a := range args {
		fields = append(fields, strconv.Itoa(a))
	}
	return p.Request(ctx, strings.Join(fields, " "), k.Label(args))
}

// Request sends one request line as it is and parses the answer; label names the call in
// errors. Call and CallKernel check what they send; Request is for a driver's tests.
func (p *Process) Request(ctx context.Context, line, label string) (Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	answer, err := p.roundTrip(ctx, line, label)
	if err != nil {
		return Result{}, err
	}
	f := strings.Fields(answer)
	if len(f) == 4 && f[0] == "ok" {
		first, err1 := strconv.ParseInt(f[1], 10, 64)
		sum, err2 := strconv.ParseInt(f[2], 10, 64)
		ns, err3 := strconv.ParseInt(f[3], 10, 64)
		if err1 == nil && err2 == nil && err3 == nil && ns >= 0 {
			return Result{First: first, Sum: sum, Elapsed: time.Duration(ns)}, nil
		}
	}
	p.stop()
	return Result{}, p.fail(fmt.Errorf("%s: %s: malformed answer %q: want \"ok <first> <sum> <elapsed ns>\" or \"error <message>\"; the driver was stopped", p.Name, label, answer))
}

// roundTrip sends one request line and returns the answer, or the driver's "error"
// answer as a *DriverError (p.mu held).
func (p *Process) roundTrip(ctx context.Context, line, label string) (string, error) {
	if p.closed.Load() {
		return "", fmt.Errorf("%s: %s: the process was closed: %w", p.Name, label, ErrExited)
	}
	if p.broken != nil {
		return "", fmt.Errorf("%s: %s: %w", p.Name, label, p.broken)
	}
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		return "", p.fail(p.died(label))
	}
	answer, err := p.readLine(ctx, label)
	if err != nil {
		return "", p.fail(err)
	}
	if msg, ok := strings.CutPrefix(answer, "error "); ok {
		return "", &DriverError{Peer: p.Name, Message: msg}
	}
	return answer, nil
}

// fail marks the process unusable after err and returns err.
func (p *Process) fail(err error) error {
	if p.broken == nil {
		p.broken = ErrExited
	}
	return err
}

// readLine waits for the driver's next line, for ctx, or for the driver's end.
func (p *Process) readLine(ctx context.Context, label string) (string, error) {
	select {
	case line, ok := <-p.lines:
		if !ok {
			return "", p.died(label)
		}
		return line, nil
	case <-ctx.Done():
		p.stop()
		select {
		case <-p.exited:
			return "", fmt.Errorf("%s: %s: %w; the driver was killed: %w", p.Name, label, context.Cause(ctx), ErrExited)
		case <-time.After(closeGrace):
			// Only a driver inside this process (c-wasm, not interruptible) cannot be stopped.
			return "", fmt.Errorf("%s: %s: %w; the driver cannot be stopped, its call runs on until it returns: %w", p.Name, label, context.Cause(ctx), ErrExited)
		}
	}
}

// died explains the driver's end, once it has ended.
func (p *Process) died(label string) error {
	select {
	case <-p.exited:
	case <-time.After(closeGrace):
		p.stop()
		select {
		case <-p.exited:
		case <-time.After(closeGrace):
			return fmt.Errorf("%s: %s: the driver closed its output but does not stop: %w", p.Name, label, ErrExited)
		}
	}
	reason := "it closed its output"
	if p.exitErr != nil {
		reason = p.exitErr.Error()
	}
	var ee *exec.ExitError
	if errors.As(p.exitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGSEGV {
			return fmt.Errorf("%s: %s: the driver died of SIGSEGV, a stack overflow most likely%s: %w: %w", p.Name, label, p.stderr.Quote(), ErrStackOverflow, ErrExited)
		}
	}
	if errors.Is(p.exitErr, ErrStackOverflow) {
		return fmt.Errorf("%s: %s: %w: %w", p.Name, label, p.exitErr, ErrExited)
	}
	if p.stderr.has("goroutine stack exceeds") {
		// A Go runtime (kernels.wasm's on node-wasm, a Go driver's) printed why it gave up.
		return fmt.Errorf("%s: %s: the Go runtime reached its stack limit (%s)%s: %w: %w", p.Name, label, reason, p.stderr.Quote(), ErrStackOverflow, ErrExited)
	}
	return fmt.Errorf("%s: %s: the driver exited (%s)%s: %w", p.Name, label, reason, p.stderr.Quote(), ErrExited)
}

// Close stops the driver: it closes its stdin, waits a moment for it to exit, then kills it.
// Close removes the temporary cache directory, if Start made one. A call in progress ends
// with ErrExited.
func (p *Process) Close() error {
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		p.stdin.Close()
		p.drain()
		select {
		case <-p.exited:
		case <-time.After(closeGrace):
			p.stop()
			select {
			case <-p.exited:
			case <-time.After(closeGrace):
				p.closeErr = fmt.Errorf("%s: the driver does not stop: a call runs on until it returns", p.Name)
			}
		}
		if p.cleanup != nil {
			p.cleanup()
		}
	})
	return p.closeErr
}

// Kill ends the driver now, as a crash would: the call in progress and every later one
// fail with ErrExited. Close is the orderly end.
func (p *Process) Kill() { p.kill() }

// stop kills the driver and drains its output, so that nothing the driver still writes
// can keep the reading goroutine, and with it the wait for the driver's end, blocked.
func (p *Process) stop() {
	p.kill()
	p.drain()
}

// drain discards the driver's remaining lines: call it only once no request will read them.
func (p *Process) drain() {
	p.drainOnce.Do(func() {
		go func() {
			for range p.lines {
			}
		}()
	})
}

// Tail keeps the first and the last bytes a driver wrote to stderr (the start is where a
// runtime says why it gave up, before its stack trace), copying them to w when it is set.
type Tail struct {
	mu  sync.Mutex
	w   io.Writer
	buf capped.Buffer
}

// The bytes of stderr a tail keeps at its start and at its end.
const (
	headMax = 1 << 10
	tailMax = 4 << 10
)

// NewTail returns a Tail that copies what it is written to w, when w is not nil.
func NewTail(w io.Writer) *Tail { return &Tail{w: w, buf: capped.Buffer{Head: headMax, Tail: tailMax}} }

// Write keeps the start and the end of what is written.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.w != nil {
		t.w.Write(p)
	}
	return t.buf.Write(p)
}

// has reports whether what was kept contains s.
func (t *Tail) has(s string) bool { return strings.Contains(t.buf.String(), s) }

// Quote returns "; stderr: ..." with what was kept, or "" when nothing was.
func (t *Tail) Quote() string {
	s := strings.TrimSpace(t.buf.String())
	if s == "" {
		return ""
	}
	return "; stderr: " + s
}
