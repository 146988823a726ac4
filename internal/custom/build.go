package custom

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmgap/wasmgap/internal/capped"
	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/internal/engine/driver/goserve"
)

// DefaultTimeout bounds one build of a user's source.
const DefaultTimeout = 10 * time.Second

// WarmTimeout bounds the build that fills an empty Go build cache with the standard
// library for GOOS=wasip1 (about 30 s of a 2-core machine; a warm build takes 0.4 s).
const WarmTimeout = 5 * time.Minute

// IDPrefix starts every built kernel's id: "custom-" and 24 hex digits of the source's
// SHA-256.
const IDPrefix = "custom-"

// Options configure a Builder. The zero value is ready to use.
type Options struct {
	// Dir holds the builds, one folder per source hash; "" means DefaultDir().
	Dir string
	// GoCache is the go command's build cache (GOCACHE), kept warm across builds; ""
	// means Dir/gocache.
	GoCache string
	// Go is the go command to run; "" means GOROOT/bin/go of the toolchain that built this
	// program when it exists, else the go on PATH.
	Go string
	// Timeout bounds one build; 0 means DefaultTimeout.
	Timeout time.Duration
	// BuildsPerMinute is how many builds one client may start a minute (a source built
	// before does not count); beyond, RateError. 0 means DefaultBuildsPerMinute.
	BuildsPerMinute int
	// MaxModule bounds a built module, in bytes; a larger one is refused (and the refusal
	// kept). 0 means DefaultMaxModule.
	MaxModule int64
	// MaxCache bounds, in bytes, the stored builds (the least recently used go first)
	// and, apart, what builds add to the Go build cache beyond the warm standard library
	// (removed when over). 0 means DefaultMaxCache.
	MaxCache int64
	// Native also builds each kernel as a native executable (same checks, same limits),
	// which the native engine runs in a worker process: for local use only, as native code
	// is confined by nothing but the worker's rlimits and time limit (wasmgap serve
	// --allow-native-custom).
	Native bool
}

// DefaultDir returns os.UserCacheDir()/wasmgap/custom, or a folder of the temporary
// directory when the user has no cache directory.
func DefaultDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "wasmgap-custom")
	}
	return filepath.Join(dir, "wasmgap", "custom")
}

// Kernel is a built user kernel: its source, its function and its WebAssembly module.
type Kernel struct {
	// ID names the kernel in POST /api/run: IDPrefix and 24 hex digits of the source's hash.
	ID string `json:"id"`
	// Func is the exported function the source declares.
	Func Func `json:"func"`
	// Dir is the folder holding kernel.go (the source) and kernel.wasm (the module).
	Dir string `json:"-"`
	// Cached is true when the build came from the cache.
	Cached bool `json:"cached"`
	// BuildTime is how long the build took (zero when cached).
	BuildTime time.Duration `json:"build_ns"`
	// Native is true when the kernel was also built as a native executable (Options.Native).
	Native bool `json:"native,omitempty"`
}

// NativePath is the path of the kernel's native executable, when Native is true.
func (k *Kernel) NativePath() string { return filepath.Join(k.Dir, "kernel.native") }

// SourcePath is the path of the kernel's source.
func (k *Kernel) SourcePath() string { return filepath.Join(k.Dir, "kernel.go") }

// ModulePath is the path of the kernel's WebAssembly module.
func (k *Kernel) ModulePath() string { return filepath.Join(k.Dir, "kernel.wasm") }

// Builder checks and builds user kernels, each source once. It is safe for concurrent
// use; how many builds run at once is its caller's to bound (the playground's run queue).
type Builder struct {
	opts Options

	warmOnce sync.Once
	warmErr  error
	warm     map[string]bool // the Go cache's files once warm (warmSet)

	rate buildRate // each client's builds of the last minute (buildrate.go)
	// trimming excludes builds while the Go cache is trimmed.
	trimming sync.RWMutex

	mu       sync.Mutex
	inflight map[string]*flight
	gate     runGate // the measured runs in flight (quiet.go), under mu
}

type flight struct {
	done chan struct{}
	k    *Kernel
	err  error
}

// NewBuilder returns a builder; nothing is built until Warm or Build.
func NewBuilder(opts Options) *Builder {
	if opts.Dir == "" {
		opts.Dir = DefaultDir()
	}
	if opts.GoCache == "" {
		opts.GoCache = filepath.Join(opts.Dir, "gocache")
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.BuildsPerMinute <= 0 {
		opts.BuildsPerMinute = DefaultBuildsPerMinute
	}
	if opts.MaxModule <= 0 {
		opts.MaxModule = DefaultMaxModule
	}
	if opts.MaxCache <= 0 {
		opts.MaxCache = DefaultMaxCache
	}
	return &Builder{opts: opts, inflight: map[string]*flight{}}
}

// ID returns the id of a source: IDPrefix and 24 hex digits of its SHA-256.
func ID(src []byte) string {
	sum := sha256.Sum256(src)
	return IDPrefix + hex.EncodeToString(sum[:12])
}

// ValidID reports whether id has the form ID returns.
func ValidID(id string) bool { return idPattern.MatchString(id) }

var idPattern = regexp.MustCompile(`^custom-[0-9a-f]{24}$`)

// goCommand finds the go command, or says that there is none.
func (b *Builder) goCommand() (string, error) {
	if b.opts.Go != "" {
		return b.opts.Go, nil
	}
	//lint:ignore SA1019 the toolchain that built the server is the one its allow-list was checked against
	if root := runtime.GOROOT(); root != "" {
		p := filepath.Join(root, "bin", "go")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("user kernels need a Go toolchain on the server: no GOROOT/bin/go and no go command on PATH (install Go 1.24 or later)")
	}
	return p, nil
}

// Warm fills the build cache with the standard library for GOOS=wasip1 (under
// WarmTimeout rather than the per-build limit), once; Build waits for it. Servers call it
// at start-up in the background. It keeps out of measurements' way: its go command runs at
// idle priority (childproc.Idle), starts only when no run is in flight and stops while
// one is (RunStarted, RunEnded); the time it is stopped does not count against its limit.
func (b *Builder) Warm(ctx context.Context) error {
	b.warmOnce.Do(func() {
		b.setWarming(true)
		defer b.setWarming(false)
		if err := b.waitNoRuns(ctx); err != nil {
			b.warmErr = fmt.Errorf("warm the Go build cache for user kernels: %w", err)
			return
		}
		dir, err := os.MkdirTemp(b.tmpRoot(), "warm-")
		if err != nil {
			b.warmErr = err
			return
		}
		defer os.RemoveAll(dir)
		src := []byte("package kernel\n\nimport (\n" + importAll() + ")\n\nfunc Warm(n int) int64 { return int64(n) }\n")
		fn := &Func{Name: "Warm", Params: []string{"n"}, Types: []string{"int"}}
		errs, err := b.compileFor(ctx, dir, src, fn, WarmTimeout, false, true)
		if err == nil && len(errs) == 0 && b.opts.Native {
			errs, err = b.compileFor(ctx, dir, src, fn, WarmTimeout, true, true)
		}
		if err == nil && len(errs) > 0 {
			err = errs
		}
		if err != nil {
			b.warmErr = fmt.Errorf("warm the Go build cache for user kernels: %w", err)
			return
		}
		b.warm = warmSet(b.opts.GoCache)
	})
	return b.warmErr
}

// importAll renders blank imports of every allowed package, so that warming compiles them all.
func importAll() string {
	var sb strings.Builder
	for _, p := range Allowed {
		fmt.Fprintf(&sb, "\t_ %q\n", p)
	}
	return sb.String()
}

func (b *Builder) tmpRoot() string {
	dir := filepath.Join(b.opts.Dir, "tmp")
	_ = os.MkdirAll(dir, 0o700)
	return dir
}

// record is what a build folder keeps besides the source and the module.
type record struct {
	Func   *Func  `json:"func,omitempty"`
	Errors Errors `json:"errors,omitempty"`
}

// Lookup returns the built kernel with the given id, or an error saying it is unknown.
func (b *Builder) Lookup(id string) (*Kernel, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("unknown kernel %q: a user kernel's id is %s and 24 hex digits, as POST /api/custom answers", id, IDPrefix)
	}
	dir := filepath.Join(b.opts.Dir, "builds", strings.TrimPrefix(id, IDPrefix))
	data, err := os.ReadFile(filepath.Join(dir, "record.json"))
	if err != nil {
		return nil, fmt.Errorf("unknown kernel %q: build it first with POST /api/custom", id)
	}
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil || rec.Func == nil {
		return nil, fmt.Errorf("kernel %q did not build: build it again with POST /api/custom", id)
	}
	k := &Kernel{ID: id, Func: *rec.Func, Dir: dir, Cached: true}
	k.Native = b.opts.Native && exists(k.NativePath())
	touch(dir)
	return k, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Build is BuildFor with no client named: every such build shares one client's rate.
func (b *Builder) Build(ctx context.Context, src []byte) (*Kernel, error) {
	return b.BuildFor(ctx, "", src)
}

// BuildFor checks src (see Check) and builds it to WebAssembly for client (an address),
// or returns the cached build of the same source. A refusal or a compiler error is
// Errors, naming lines and columns; a limit of the build is *LimitError; a client over
// its rate is *RateError; other errors (no toolchain) say what happened.
func (b *Builder) BuildFor(ctx context.Context, client string, src []byte) (*Kernel, error) {
	fn, err := Check(src)
	if err != nil {
		return nil, err
	}
	id := ID(src)
	if k, err := b.cached(id); k != nil || err != nil {
		if k != nil {
			touch(k.Dir)
		}
		if k != nil && b.opts.Native && !k.Native {
			if err := b.buildNative(ctx, k, src); err != nil {
				return nil, err
			}
		}
		return k, err
	}
	b.mu.Lock()
	f, ok := b.inflight[id]
	if !ok {
		if err := b.allow(client); err != nil {
			b.mu.Unlock()
			return nil, err
		}
		f = &flight{done: make(chan struct{})}
		b.inflight[id] = f
	}
	b.mu.Unlock()
	if ok {
		select {
		case <-f.done:
			if f.k != nil {
				k := *f.k
				k.Cached, k.BuildTime = true, 0
				return &k, nil
			}
			return nil, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.k, f.err = b.build(ctx, client, id, src, fn)
	f.err = b.scrubError(f.err)
	b.trimGoCache()
	b.mu.Lock()
	delete(b.inflight, id)
	b.mu.Unlock()
	close(f.done)
	return f.k, f.err
}

// cached returns the stored build of id: the kernel, or its compiler errors.
func (b *Builder) cached(id string) (*Kernel, error) {
	dir := filepath.Join(b.opts.Dir, "builds", strings.TrimPrefix(id, IDPrefix))
	data, err := os.ReadFile(filepath.Join(dir, "record.json"))
	if err != nil {
		return nil, nil
	}
	var rec record
	if json.Unmarshal(data, &rec) != nil {
		return nil, nil
	}
	if len(rec.Errors) > 0 {
		return nil, rec.Errors
	}
	if rec.Func == nil {
		return nil, nil
	}
	return &Kernel{ID: id, Func: *rec.Func, Dir: dir, Cached: true}, nil
}

func (b *Builder) build(ctx context.Context, client, id string, src []byte, fn *Func) (*Kernel, error) {
	if err := b.Warm(ctx); err != nil {
		return nil, err
	}
	b.trimming.RLock()
	defer b.trimming.RUnlock()
	work, err := os.MkdirTemp(b.tmpRoot(), "build-")
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", fn.Name, err)
	}
	defer os.RemoveAll(work)
	start := time.Now()
	errs, err := b.compile(ctx, work, src, fn, b.opts.Timeout)
	if err != nil {
		return nil, err
	}
	took := time.Since(start)
	// Store the outcome: the source, the module, the record last (its presence means done).
	final := filepath.Join(b.opts.Dir, "builds", strings.TrimPrefix(id, IDPrefix))
	stage := filepath.Join(work, "out")
	if err := os.MkdirAll(stage, 0o700); err != nil {
		return nil, err
	}
	if len(errs) == 0 {
		if st, err := os.Stat(filepath.Join(work, "kernel.wasm")); err == nil && st.Size() > b.opts.MaxModule {
			errs = b.errModule(st.Size())
		}
	}
	rec := record{Func: fn}
	if len(errs) > 0 {
		rec = record{Errors: errs}
	} else if err := os.Rename(filepath.Join(work, "kernel.wasm"), filepath.Join(stage, "kernel.wasm")); err != nil {
		return nil, fmt.Errorf("build %s: %w", fn.Name, err)
	}
	data, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(stage, "kernel.go"), src, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(stage, "record.json"), data, 0o600); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		return nil, err
	}
	if err := os.Rename(stage, final); err != nil && !errors.Is(err, os.ErrExist) {
		if _, statErr := os.Stat(filepath.Join(final, "record.json")); statErr != nil {
			return nil, fmt.Errorf("store the build of %s: %w", fn.Name, err)
		}
	}
	b.evict(final)
	if len(errs) > 0 {
		return nil, errs
	}
	k := &Kernel{ID: id, Func: *fn, Dir: final, BuildTime: took}
	if b.opts.Native {
		if err := b.buildNative(ctx, k, src); err != nil {
			return nil, err
		}
		k.BuildTime = time.Since(start)
	}
	return k, nil
}

// buildNative builds k's source as a native executable into k.NativePath().
func (b *Builder) buildNative(ctx context.Context, k *Kernel, src []byte) error {
	work, err := os.MkdirTemp(b.tmpRoot(), "native-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	errs, err := b.compileFor(ctx, work, src, &k.Func, b.nativeTimeout(), true, false)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return errs
	}
	if err := os.Rename(filepath.Join(work, "kernel.native"), k.NativePath()); err != nil {
		return fmt.Errorf("store the native build of %s: %w", k.Func.Name, err)
	}
	k.Native = true
	return nil
}

// nativeTimeout bounds a native build: the first one fills the Go cache for this platform.
func (b *Builder) nativeTimeout() time.Duration {
	if exists(filepath.Join(b.opts.Dir, "native-warm")) {
		return b.opts.Timeout
	}
	return WarmTimeout
}

// wrapper is the main package of a build: it exports the user's function as "run", its
// parameters as i32 (the engines' and the page's calling convention).
func wrapper(fn *Func) string {
	var params, args []string
	for i, t := range fn.Types {
		params = append(params, fmt.Sprintf("a%d int32", i))
		args = append(args, fmt.Sprintf("%s(a%d)", t, i))
	}
	return fmt.Sprintf(`package main

import "userkernel/kernel"

func main() {}

//go:wasmexport run
func run(%s) int64 { return kernel.%s(%s) }
`, strings.Join(params, ", "), fn.Name, strings.Join(args, ", "))
}

// nativeWrapper is the main package of a native build: a driver of package internal/engine/driver
// that serves the one kernel under its function's name (the runner's kernel name) with the
// module's int32 parameters, through goserve's Serve (serve.go beside it), so that the
// calls are timed inside the process.
func nativeWrapper(fn *Func) string {
	var params, args []string
	for i, t := range fn.Types {
		params = append(params, fmt.Sprintf("{Name: %q, Min: %d, Max: %d}", fn.Params[i], math.MinInt32, math.MaxInt32))
		args = append(args, fmt.Sprintf("%s(a[%d])", t, i))
	}
	return fmt.Sprintf(`package main

import (
	"os"
	"runtime"

	"userkernel/kernel"
)

var served = []Kernel{{Name: %q, Params: []Param{%s}, Call: func(a []int) int64 { return kernel.%s(%s) }}}

func main() {
	if err := Serve(os.Stdin, os.Stdout, "go", runtime.Version(), served); err != nil {
		os.Exit(1)
	}
}
`, fn.Name, strings.Join(params, ", "), fn.Name, strings.Join(args, ", "))
}

// Export is the name of the module's one export, the user's function.
const Export = "run"

// compile builds src in dir (a fresh module: go.mod, kernel/kernel.go, main.go) into
// dir/kernel.wasm under the build limits. Compiler errors come back as Errors; err is for
// everything else.
func (b *Builder) compile(ctx context.Context, dir string, src []byte, fn *Func, timeout time.Duration) (Errors, error) {
	return b.compileFor(ctx, dir, src, fn, timeout, false, false)
}

// compileFor builds for wasip1 (kernel.wasm), or natively (kernel.native) when native. A
// warm-up build (warm) runs at idle priority and stops while measured runs are in flight
// (pauseForRuns).
func (b *Builder) compileFor(ctx context.Context, dir string, src []byte, fn *Func, timeout time.Duration, native, warm bool) (Errors, error) {
	goBin, err := b.goCommand()
	if err != nil {
		return nil, err
	}
	files := map[string]string{
		"go.mod":           "module userkernel\n\ngo 1.24\n",
		"main.go":          wrapper(fn),
		"kernel/kernel.go": string(src),
	}
	if native {
		files["main.go"] = nativeWrapper(fn)
		files["serve.go"] = goserve.Source("main")
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(b.opts.GoCache, 0o700); err != nil {
		return nil, fmt.Errorf("create the Go build cache %s: %w", b.opts.GoCache, err)
	}
	home := filepath.Join(b.opts.Dir, "home")
	_ = os.MkdirAll(home, 0o700)
	env := []string{
		"PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin",
		"HOME=" + home,
		"GOCACHE=" + b.opts.GoCache,
		"GOPATH=" + filepath.Join(home, "go"),
		"GOTMPDIR=" + dir,
		"GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOWORK=off",
		"GOENV=off", "GONOSUMDB=*", "GOTELEMETRY=off",
		"CGO_ENABLED=0",
	}
	args := []string{"build", "-buildmode=c-shared", "-trimpath", "-o", "kernel.wasm", "."}
	if native {
		env = append(env, "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
		args = []string{"build", "-trimpath", "-o", "kernel.native", "."}
	} else {
		env = append(env, "GOOS=wasip1", "GOARCH=wasm")
	}
	var cancel context.CancelFunc
	var expired atomic.Bool
	if warm {
		ctx, cancel = context.WithCancel(ctx) // pauseForRuns keeps the time limit
	} else {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	cmd, err := limitedCommand(ctx, goBin, args, env)
	if err != nil {
		return nil, err
	}
	cmd.Dir = dir
	out := &capped.Buffer{Head: 32 << 10, Tail: 4 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	// A process group of its own that dies with the server (package childproc); the
	// parent-death signal survives the helper's exec of the go command.
	var runErr error
	if warm {
		if runErr = childproc.Start(cmd, childproc.Idle); runErr == nil {
			done := make(chan struct{})
			go b.pauseForRuns(cmd, timeout, func() { expired.Store(true); cancel() }, done)
			runErr = cmd.Wait()
			close(done)
		}
	} else if runErr = childproc.Start(cmd); runErr == nil {
		runErr = cmd.Wait()
	}
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || expired.Load() {
			return nil, &LimitError{Msg: fmt.Sprintf("the build took longer than its limit of %v and was stopped", timeout)}
		}
		return nil, ctx.Err()
	}
	if runErr == nil {
		if native {
			_ = os.WriteFile(filepath.Join(b.opts.Dir, "native-warm"), nil, 0o600)
		}
		return nil, nil
	}
	return b.diagnose(out.String(), runErr, dir, goBin)
}

// compilerLine matches the compiler's errors about the user's file ("kernel/kernel.go:3:5:
// …", or with the module's path in front under -trimpath).
var compilerLine = regexp.MustCompile(`(?m)^(?:\./|userkernel/)?kernel/kernel\.go:(\d+):(\d+): (.*)$`)

// wrapperLine matches the compiler's errors about the wrapper (main.go).
var wrapperLine = regexp.MustCompile(`(?m)^(?:\./|userkernel/)?main\.go:\d+:\d+: .*$`)

// outOfMemory matches what the Go runtime of the compiler or the linker prints when its
// address space (BuildLimits.AddressSpace) runs out.
var outOfMemory = regexp.MustCompile(`(?m)^(?:fatal error: (?:runtime: )?out of memory|runtime: out of memory|fatal error: runtime: cannot allocate memory|runtime: failed to create new OS thread|runtime: cannot map pages)`)

// fileTooLarge matches a write past RLIMIT_FSIZE (BuildLimits.FileSize).
var fileTooLarge = regexp.MustCompile(`(?i)file too large|file size limit exceeded`)

// tooLarge matches the compiler's and the linker's refusals of data past what a module
// holds.
var tooLarge = regexp.MustCompile(`(?m)symbol too large|too much data|section too large|larger than address space|exceeds 2GB`)

// diagnose turns the output of a failed build into what its requester is told: compiler
// errors as Errors, limits as *LimitError, anything else as an error; none of them names
// a path of this machine.
func (b *Builder) diagnose(text string, runErr error, dir, goBin string) (Errors, error) {
	text = b.scrub(text, dir, goBin)
	var errs Errors
	for _, m := range compilerLine.FindAllStringSubmatch(text, 20) {
		var line, col int
		fmt.Sscan(m[1], &line)
		fmt.Sscan(m[2], &col)
		errs = append(errs, &Error{Line: line, Column: col, Msg: m[3]})
	}
	if len(errs) > 0 {
		return errs, nil
	}
	text = strings.TrimSpace(text)
	switch {
	case outOfMemory.MatchString(text):
		return nil, &LimitError{Msg: fmt.Sprintf("the build ran out of memory: the compiler and the linker may use %d MiB each, and this source needs more (large composite literals or arrays, deep generic instantiation)", BuildLimits.AddressSpace>>20)}
	case fileTooLarge.MatchString(text + " " + fmt.Sprint(runErr)):
		// RLIMIT_FSIZE: EFBIG to a process that ignores SIGXFSZ, the signal to others.
		return nil, &LimitError{Msg: fmt.Sprintf("the build wrote a file larger than its limit of %d MiB: the kernel's data or code is too large", BuildLimits.FileSize>>20)}
	case tooLarge.MatchString(text):
		return Errors{{Msg: "the kernel's data is too large for a module (at most 2 GB in all, far less under the module's size limit): " + firstLines(text, 3)}}, nil
	case wrapperLine.MatchString(text):
		// The wrapper failed: the source redefined what it relies on (int, int32, int64).
		return Errors{{Msg: "the kernel's signature could not be called as declared (does the source redefine int, int32 or int64?): " + firstLines(text, 5)}}, nil
	}
	return nil, fmt.Errorf("the build failed (%v): %s", runErr, firstLines(text, 10))
}

// scrub replaces this machine's paths in a build's output: the build's folder, the
// builder's folders, the toolchain's, and any other absolute path left (by its last
// element).
func (b *Builder) scrub(text, dir, goBin string) string {
	//lint:ignore SA1019 the toolchain's folder, as goCommand finds it
	root := runtime.GOROOT()
	for _, r := range []struct{ path, as string }{
		{dir, "$WORK"}, {b.opts.GoCache, "$GOCACHE"}, {b.opts.Dir, "$CACHE"},
		{filepath.Dir(filepath.Dir(goBin)), "$GOROOT"}, {root, "$GOROOT"}, {os.TempDir(), "$TMP"},
	} {
		if len(r.path) > 1 {
			text = strings.ReplaceAll(text, r.path, r.as)
		}
	}
	return absPath.ReplaceAllString(text, "${1}…/${2}")
}

// scrubError keeps Errors, limits and the context's errors as they are, and removes this
// machine's paths from the text of any other error (a folder that could not be made, a
// toolchain that failed).
func (b *Builder) scrubError(err error) error {
	var errs Errors
	var limit *LimitError
	if err == nil || errors.As(err, &errs) || errors.As(err, &limit) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return errors.New(b.scrub(err.Error(), "", ""))
}

// absPath matches an absolute path of two elements or more, at the start of a word; its
// last element is kept.
var absPath = regexp.MustCompile(`(^|[\s"'(=:,])(?:/[\w.+@-]+)+/([\w.+@-]+)`)

// LimitError is a build stopped by a limit (time, memory).
type LimitError struct{ Msg string }

func (e *LimitError) Error() string { return e.Msg }

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}
