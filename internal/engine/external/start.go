package external

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/driver"
)

// sources are the drivers, embedded so that a binary builds them wherever it runs.
//
//go:embed c/kernels.c java/Kernels.java js/kernels.js php/kernels.php nodewasm/driver.mjs python/kernels.py lua/kernels.lua
var sources embed.FS

// The Debian packages that provide each program (Debian 12).
const (
	hintGCC    = "apt-get install gcc"
	hintClang  = "apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32"
	hintJava   = "apt-get install openjdk-17-jdk-headless"
	hintNode   = "apt-get install nodejs"
	hintPHP    = "apt-get install php-cli"
	hintJIT    = "apt-get install php-cli php-opcache"
	hintPython = "apt-get install python3"
	hintPyPy   = "apt-get install pypy3"
	hintLua    = "apt-get install lua5.4"
	hintLuaJIT = "apt-get install luajit"
)

// The JIT settings of the php-jit peer.
var phpJIT = []string{"-d", "opcache.enable_cli=1", "-d", "opcache.jit=tracing", "-d", "opcache.jit_buffer_size=64M"}

// javaFlags keep the JIT from inlining count, as Go's count is //go:noinline (test8), and
// send the JVM's own warnings to stderr, off the protocol's stdout.
var javaFlags = []string{"-XX:+DisplayVMOutputToStderr", "-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,Kernels::count"}

// V8's flags for each tier of kernels.wasm: node-wasm is V8's default (Liftoff, then
// TurboFan for hot functions), and so is node-wasm-opt, on the module after wasm-opt. Liftoff alone takes --liftoff-only: V8 11's dynamic tiering
// moves a hot function to TurboFan despite --no-wasm-tier-up (package explain's listing of
// node-wasm-liftoff showed TurboFan's code under those flags).
var wasmTiers = map[string][]string{
	NodeWasm:         nil,
	NodeWasmOpt:      nil,
	NodeWasmLiftoff:  {"--liftoff-only"},
	NodeWasmTurbofan: {"--no-liftoff"},
}

// spec is one engine of the package: what the page and the reports say about it, and how
// its driver starts.
type spec struct {
	info  engine.Info
	start func(ctx context.Context, name string, opts Options) (*Process, error)
}

// specs lists the engines of the package (engine.Order places them among the others).
var specs = []spec{
	{engine.Info{Name: NodeWasm, Title: "Node wasm", Color: "#88d27a", Install: hintNode, KernelsWasm: true,
		What: "kernels.wasm compiled by Node's V8 (Liftoff, then TurboFan), run through node:wasi", Probe: probeNode},
		startNodeWasm},
	{engine.Info{Name: NodeWasmOpt, Title: "Node wasm, wasm-opt", Color: "#3f8f3a", Install: hintNode + " binaryen", KernelsWasm: true,
		What:  "kernels.wasm after binaryen's wasm-opt -O3, compiled by Node's V8 (Liftoff, then TurboFan), run through node:wasi (the optimised module cached on disk at its first use)",
		Probe: probeNode},
		startNodeWasm},
	{engine.Info{Name: NodeWasmTurbofan, Title: "Node wasm TurboFan", Color: "#5fae52", Install: hintNode, KernelsWasm: true,
		What: "kernels.wasm on V8's optimising tier alone (node --no-liftoff)", Probe: probeNode, Runtime: "V8 wasm", Tier: engine.TierJIT},
		startNodeWasm},
	{engine.Info{Name: NodeWasmLiftoff, Title: "Node wasm Liftoff", Color: "#b5e3a9", Install: hintNode, KernelsWasm: true,
		What: "kernels.wasm on V8's baseline compiler alone (node --liftoff-only)", Probe: probeNode, Runtime: "V8 wasm", Tier: engine.TierInterpreter},
		startNodeWasm},
	{engine.Info{Name: C, Title: "C", Color: "#1f3d7a", Install: hintGCC, What: "the kernels in C, compiled by gcc -O2",
		Probe: probeCmd("gcc", "--version")}, startC},
	{engine.Info{Name: CWasm, Title: "C → wasm", Color: "#9ecae9", Install: hintClang,
		What: "the same C compiled to wasm32-wasi by clang -O2, run by wazero's compiler", Probe: probeCmd("clang", "--version")}, startCWasm},
	{engine.Info{Name: Java, Title: "Java", Color: "#d67195", Install: hintJava, What: "the kernels in Java on OpenJDK's HotSpot JIT",
		Probe: probeJava, Runtime: "Java HotSpot", Tier: engine.TierJIT}, startJava},
	{engine.Info{Name: JavaInt, Title: "Java -Xint", Color: "#f2b6cb", Install: hintJava, What: "the same Java on HotSpot's interpreter alone (java -Xint)",
		Probe: probeJava, Runtime: "Java HotSpot", Tier: engine.TierInterpreter}, startJava},
	{engine.Info{Name: NodeJS, Title: "Node JS", Color: "#c9a400", Install: hintNode, What: "the kernels in JavaScript on Node's V8 (its JITs)",
		Probe: probeNode, Runtime: "V8 JavaScript", Tier: engine.TierJIT}, startNodeJS},
	{engine.Info{Name: NodeJSJitless, Title: "Node JS jitless", Color: "#e8d77a", Install: hintNode, What: "the same JavaScript on V8's Ignition interpreter alone (node --jitless)",
		Probe: probeNode, Runtime: "V8 JavaScript", Tier: engine.TierInterpreter}, startNodeJS},
	{engine.Info{Name: LuaJIT, Title: "LuaJIT", Color: "#3e7cb1", Install: hintLuaJIT, What: "the kernels in Lua on LuaJIT's tracing JIT",
		Probe: probeCmd("luajit", "-v"), Runtime: "LuaJIT", Tier: engine.TierJIT}, startLua},
	{engine.Info{Name: PyPy, Title: "PyPy", Color: "#6d904f", Install: hintPyPy, What: "the kernels in Python on PyPy's tracing JIT (pypy3)",
		Probe: probeCmd("pypy3", "--version"), Runtime: "Python", Tier: engine.TierJIT}, startPython},
	{engine.Info{Name: PHPJIT, Title: "PHP JIT", Color: "#8c6bb1", Install: hintJIT, What: "the kernels in PHP 8 with opcache's tracing JIT",
		Probe: probeCmd("php", "--version"), Runtime: "PHP", Tier: engine.TierJIT}, startPHP},
	{engine.Info{Name: PHP, Title: "PHP", Color: "#6b5b95", Install: hintPHP, What: "the kernels in PHP 8, interpreted, no JIT",
		Probe: probeCmd("php", "--version"), Runtime: "PHP", Tier: engine.TierInterpreter}, startPHP},
	{engine.Info{Name: LuaJITInterp, Title: "LuaJIT -joff", Color: "#9ec3e0", Install: hintLuaJIT, What: "the same Lua on LuaJIT's interpreter alone (luajit -joff)",
		Probe: probeCmd("luajit", "-v"), Runtime: "LuaJIT", Tier: engine.TierInterpreter}, startLua},
	{engine.Info{Name: Lua, Title: "Lua 5.4", Color: "#000080", Install: hintLua, What: "the kernels in Lua on the reference interpreter (lua5.4)",
		Probe: probeCmd("lua5.4", "-v")}, startLua},
	{engine.Info{Name: Python, Title: "CPython", Color: "#ffd43b", Install: hintPython, What: "the kernels in Python on CPython 3, interpreted (python3)",
		Probe: probeCmd("python3", "--version"), Runtime: "Python", Tier: engine.TierInterpreter}, startPython},
}

func init() {
	for _, s := range specs {
		info := s.info
		engine.Describe(info, func() engine.Engine { return NewEngine(info.Name, Options{}) })
	}
}

// NewEngine returns the named driver as an engine; Load starts it.
func NewEngine(name string, opts Options) *driver.Engine {
	return driver.NewEngine(name, func(ctx context.Context) (*Process, error) { return Start(ctx, name, opts) })
}

// Start builds the named driver if the cache does not hold it yet, starts it and waits for
// its ready line. A missing compiler or runtime is an error that wraps ErrNotInstalled and
// names the packages to install. Close the Process when done.
func Start(ctx context.Context, name string, opts Options) (*Process, error) {
	for _, s := range specs {
		if s.info.Name == name {
			return s.start(ctx, name, opts)
		}
	}
	return nil, fmt.Errorf("unknown peer %q: valid peers are %s, and %s", name, strings.Join(Names(), ", "), strings.Join(NodeWasms(), ", "))
}

func startC(ctx context.Context, name string, opts Options) (*Process, error) {
	b, err := buildC(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	return b.Run(ctx, opts.Stderr, filepath.Join(b.Dir, "kernels"))
}

// buildC builds the C driver (gcc -O2) into the cache: its binary is b.Dir/kernels.
func buildC(ctx context.Context, name string, opts Options) (*driver.Built, error) {
	gcc, err := lookup(opts, "gcc", hintGCC)
	if err != nil {
		return nil, err
	}
	return prepare(ctx, opts, name, embedded("c/kernels.c"), []string{gcc}, func(dir string) error {
		return driver.Compile(ctx, dir, gcc, hintGCC, "-O2", "-o", "kernels", "kernels.c")
	})
}

func startCWasm(ctx context.Context, name string, opts Options) (*Process, error) {
	clang, err := lookup(opts, "clang", hintClang)
	if err != nil {
		return nil, err
	}
	b, err := prepare(ctx, opts, name, embedded("c/kernels.c"), []string{clang}, func(dir string) error {
		// The same 8 MiB stack as the native C driver (clang's default is 64 KiB).
		return driver.Compile(ctx, dir, clang, hintClang, "--target=wasm32-wasi", "-O2", "-Wl,-z,stack-size=8388608", "-o", "kernels.wasm", "kernels.c")
	})
	if err != nil {
		return nil, err
	}
	return startWasm(ctx, b, opts)
}

func startJava(ctx context.Context, name string, opts Options) (*Process, error) {
	java, err := lookup(opts, "java", hintJava)
	if err != nil {
		return nil, err
	}
	b, err := buildJava(ctx, opts)
	if err != nil {
		return nil, err
	}
	b.Name = name
	flags := javaFlags
	if name == JavaInt {
		flags = slices.Concat([]string{"-Xint"}, javaFlags)
	}
	p, err := b.Run(ctx, opts.Stderr, java, slices.Concat(flags, []string{"-cp", b.Dir, "Kernels"})...)
	if err == nil && name == JavaInt {
		p.Runtime += " -Xint"
	}
	return p, err
}

// buildJava compiles the Java driver (javac) into the cache: its classes are in b.Dir. Both
// java engines share one build: the classes do not depend on how the JVM runs them.
func buildJava(ctx context.Context, opts Options) (*driver.Built, error) {
	javac, err := lookup(opts, "javac", hintJava)
	if err != nil {
		return nil, err
	}
	return prepare(ctx, opts, Java, embedded("java/Kernels.java"), []string{javac}, func(dir string) error {
		return driver.Compile(ctx, dir, javac, hintJava, "-d", ".", "Kernels.java")
	})
}

func startNodeJS(ctx context.Context, name string, opts Options) (*Process, error) {
	node, err := lookup(opts, "node", hintNode)
	if err != nil {
		return nil, err
	}
	b, err := prepare(ctx, opts, NodeJS, embedded("js/kernels.js"), nil, nil)
	if err != nil {
		return nil, err
	}
	b.Name = name
	var flags []string
	if name == NodeJSJitless {
		// Ignition alone; the kernels are plain JavaScript, no wasm, so V8 runs them all.
		flags = []string{"--jitless"}
	}
	p, err := b.Run(ctx, opts.Stderr, node, append(flags, filepath.Join(b.Dir, "kernels.js"))...)
	if err == nil && len(flags) > 0 {
		p.Runtime += " " + strings.Join(flags, " ")
	}
	return p, err
}

func startPHP(ctx context.Context, name string, opts Options) (*Process, error) {
	hint := hintPHP
	// PHP's warnings, start-up ones included, go to stderr, off the protocol's stdout.
	flags := []string{"-d", "display_errors=stderr", "-d", "display_startup_errors=1", "-d", "opcache.enable_cli=0"}
	if name == PHPJIT {
		hint, flags = hintJIT, slices.Concat(flags[:4], phpJIT)
	}
	php, err := lookup(opts, "php", hint)
	if err != nil {
		return nil, err
	}
	b, err := prepare(ctx, opts, name, embedded("php/kernels.php"), nil, nil)
	if err != nil {
		return nil, err
	}
	p, err := b.Run(ctx, opts.Stderr, php, slices.Concat(flags, []string{filepath.Join(b.Dir, "kernels.php")})...)
	if err != nil {
		return nil, err
	}
	if name == PHPJIT && !strings.Contains(p.Runtime, ", JIT ") {
		p.Close()
		return nil, driver.NotInstalled(fmt.Sprintf("php-jit: opcache's JIT is not available in %s (%s): %s", php, p.Runtime, hint))
	}
	return p, nil
}

func startPython(ctx context.Context, name string, opts Options) (*Process, error) {
	program, hint := "python3", hintPython
	if name == PyPy {
		program, hint = "pypy3", hintPyPy
	}
	py, err := lookup(opts, program, hint)
	if err != nil {
		return nil, err
	}
	b, err := prepare(ctx, opts, Python, embedded("python/kernels.py"), nil, nil)
	if err != nil {
		return nil, err
	}
	b.Name = name
	// -u: unbuffered stdout, so that every answer leaves at once; -S: no site packages.
	return b.Run(ctx, opts.Stderr, py, "-u", "-S", filepath.Join(b.Dir, "kernels.py"))
}

func startLua(ctx context.Context, name string, opts Options) (*Process, error) {
	program, hint := "lua5.4", hintLua
	var flags []string
	switch name {
	case LuaJIT:
		program, hint = "luajit", hintLuaJIT
	case LuaJITInterp:
		program, hint, flags = "luajit", hintLuaJIT, []string{"-joff"}
	}
	lua, err := lookup(opts, program, hint)
	if err != nil {
		return nil, err
	}
	b, err := prepare(ctx, opts, Lua, embedded("lua/kernels.lua"), nil, nil)
	if err != nil {
		return nil, err
	}
	b.Name = name
	// The driver's ready line says "(JIT off)" itself.
	return b.Run(ctx, opts.Stderr, lua, append(flags, filepath.Join(b.Dir, "kernels.lua"))...)
}

func startNodeWasm(ctx context.Context, name string, opts Options) (*Process, error) {
	node, err := lookup(opts, "node", hintNode)
	if err != nil {
		return nil, err
	}
	files, err := nodeWasmFiles(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	b, err := prepare(ctx, opts, NodeWasm, files, nil, nil)
	if err != nil {
		return nil, err
	}
	b.Name = name
	b.Stdout = opts.Stdout
	flags := wasmTiers[name]
	p, err := b.Run(ctx, opts.Stderr, node, slices.Concat(flags, []string{filepath.Join(b.Dir, "driver.mjs"), filepath.Join(b.Dir, "kernels.wasm"), filepath.Join(b.Dir, "catalogue.json")})...)
	if err == nil && len(flags) > 0 {
		p.Runtime += " " + strings.Join(flags, " ")
	}
	return p, err
}

// lookup finds the program the peer needs, under its usual name or opts.Commands's.
func lookup(opts Options, program, hint string) (string, error) {
	return driver.Lookup(opts.Commands, program, hint)
}

// prepare puts the driver's files in opts' cache directory (driver.Prepare).
func prepare(ctx context.Context, opts Options, name string, files []driver.File, inputs []string, build func(dir string) error) (*driver.Built, error) {
	root := opts.CacheDir
	if root == "" {
		root = DefaultCacheDir()
	}
	b, err := driver.Prepare(ctx, root, name, files, inputs, build)
	if err == nil {
		b.Args, b.Env = opts.RuntimeArgs, opts.Env
	}
	return b, err
}

// embedded is the driver source at path in sources, as one file; the sources are built
// into the binary, so a missing one is a programming error.
func embedded(path string) []driver.File {
	data, err := fs.ReadFile(sources, path)
	if err != nil {
		panic("external: " + err.Error())
	}
	return []driver.File{{Name: filepath.Base(path), Data: data}}
}

// probeCmd returns a Probe that runs program with args and keeps the first line it prints.
func probeCmd(program string, args ...string) func() string {
	return func() string {
		path, err := exec.LookPath(program)
		if err != nil {
			return ""
		}
		return driver.ProbeVersion(path, args...)
	}
}

var (
	probeNode = probeCmd("node", "--version")
	probeJava = probeCmd("java", "-version")
)
