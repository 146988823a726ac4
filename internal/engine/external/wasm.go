package external

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/driver"
)

// startWasm runs the C driver compiled to wasm32-wasi in this process, on wazero's
// compiler: its main reads requests from stdin and writes answers to stdout through WASI,
// here a pair of pipes. The module is compiled once (Setup.Compile, with wazero's
// compilation cache under the cache directory) and instantiated once (Setup.Start), and
// serves every call of the Process.
//
// With Options.InterruptibleWasm the runtime closes the module when its context is
// cancelled, so that a timed-out call stops as a killed driver process does; without it
// (the default, as the repository's other wazero engines run) a call that times out runs
// on in its goroutine until it returns: stop it by ending the process.
func startWasm(ctx context.Context, b *driver.Built, opts Options) (*Process, error) {
	bin, err := os.ReadFile(filepath.Join(b.Dir, "kernels.wasm"))
	if err != nil {
		b.Done()
		return nil, fmt.Errorf("%s: %w", b.Name, err)
	}
	root := filepath.Dir(b.Dir)
	cache, err := wazero.NewCompilationCacheWithDir(filepath.Join(root, "wazero"))
	if err != nil {
		b.Done()
		return nil, fmt.Errorf("%s: wazero compilation cache: %w", b.Name, err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	rt := wazero.NewRuntimeWithConfig(runCtx, wazero.NewRuntimeConfigCompiler().
		WithCompilationCache(cache).
		WithCloseOnContextDone(opts.InterruptibleWasm))
	closeAll := func() {
		cancel()
		rt.Close(context.Background())
		cache.Close(context.Background())
		b.Done()
	}
	if _, err := wasi_snapshot_preview1.Instantiate(runCtx, rt); err != nil {
		closeAll()
		return nil, fmt.Errorf("%s: WASI: %w", b.Name, err)
	}
	t0 := time.Now()
	compiled, err := rt.CompileModule(runCtx, bin)
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("%s: compile kernels.wasm: %w", b.Name, err)
	}
	compile := time.Since(t0)

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := driver.NewTail(opts.Stderr)
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithArgs("kernels").
		WithStdin(inR).
		WithStdout(outW).
		WithStderr(stderr).
		WithSysNanotime(). // the driver's clock must be real: wazero's default is a fake
		WithSysWalltime()
	exit := make(chan error, 1)
	t1 := time.Now()
	go func() {
		mod, err := rt.InstantiateModule(runCtx, compiled, cfg)
		if mod != nil {
			mod.Close(context.Background())
		}
		err = wasmExit(err)
		outW.CloseWithError(io.EOF)
		inR.Close()
		exit <- err
	}()
	c := driver.Conn{
		Stdin:  inW,
		Stdout: outR,
		Wait:   func() error { return <-exit },
		Kill:   cancel,
	}
	p := driver.Attach(b.Name, c, stderr, closeAll)
	if err := p.Ready(ctx); err != nil {
		p.Close()
		return nil, err
	}
	if v := engine.ModuleVersion("wazero", "github.com/tetratelabs/wazero"); v != "" {
		p.Runtime += " on " + v
	}
	p.Setup = b.Setup
	p.Setup.Compile = compile
	p.Setup.Start = time.Since(t1)
	return p, nil
}

// wasmExit turns the end of the module's _start into the driver's exit error: nil for a
// clean exit, ErrStackOverflow for the trap wazero reports when the call stack is exhausted.
func wasmExit(err error) error {
	if err == nil {
		return nil
	}
	var ee *sys.ExitError
	if errors.As(err, &ee) {
		switch ee.ExitCode() {
		case 0:
			return nil
		case sys.ExitCodeContextCanceled:
			return errors.New("killed")
		}
		return fmt.Errorf("exit status %d", ee.ExitCode())
	}
	if strings.Contains(err.Error(), "stack overflow") {
		return fmt.Errorf("%w: %v", ErrStackOverflow, driver.FirstLine(err.Error()))
	}
	return fmt.Errorf("trap: %v", driver.FirstLine(err.Error()))
}
