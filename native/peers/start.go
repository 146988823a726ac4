package peers

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// sources are the drivers, embedded so that a binary builds them wherever it runs.
//
//go:embed c/kernels.c java/Kernels.java js/kernels.js php/kernels.php nodewasm/driver.mjs
var sources embed.FS

// The Debian packages that provide each program (Debian 12).
const (
	hintGCC   = "apt-get install gcc"
	hintClang = "apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32"
	hintJava  = "apt-get install openjdk-17-jdk-headless"
	hintNode  = "apt-get install nodejs"
	hintPHP   = "apt-get install php-cli"
	hintJIT   = "apt-get install php-cli php-opcache"
)

// The JIT settings of the php-jit peer.
var phpJIT = []string{"-d", "opcache.enable_cli=1", "-d", "opcache.jit=tracing", "-d", "opcache.jit_buffer_size=64M"}

// javaFlags keep the JIT from inlining count, as Go's count is //go:noinline (test8), and
// send the JVM's own warnings to stderr, off the protocol's stdout.
var javaFlags = []string{"-XX:+DisplayVMOutputToStderr", "-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,Kernels::count"}

// Start builds the peer's driver if the cache does not hold it yet, starts it and waits for
// its ready line. A missing compiler or runtime is an error that wraps ErrNotInstalled and
// names the packages to install. Close the Process when done.
func Start(ctx context.Context, name string, opts Options) (*Process, error) {
	switch name {
	case C:
		gcc, err := lookup(opts, "gcc", hintGCC)
		if err != nil {
			return nil, err
		}
		b, err := prepare(ctx, opts, name, embedded("c/kernels.c"), []string{gcc}, func(dir string) error {
			return compile(ctx, dir, gcc, hintGCC, "-O2", "-o", "kernels", "kernels.c")
		})
		if err != nil {
			return nil, err
		}
		return b.run(ctx, opts, filepath.Join(b.dir, "kernels"))
	case CWasm:
		clang, err := lookup(opts, "clang", hintClang)
		if err != nil {
			return nil, err
		}
		b, err := prepare(ctx, opts, name, embedded("c/kernels.c"), []string{clang}, func(dir string) error {
			// The same 8 MiB stack as the native C driver (clang's default is 64 KiB).
			return compile(ctx, dir, clang, hintClang, "--target=wasm32-wasi", "-O2", "-Wl,-z,stack-size=8388608", "-o", "kernels.wasm", "kernels.c")
		})
		if err != nil {
			return nil, err
		}
		return startWasm(ctx, b, opts)
	case Java:
		javac, err := lookup(opts, "javac", hintJava)
		if err != nil {
			return nil, err
		}
		java, err := lookup(opts, "java", hintJava)
		if err != nil {
			return nil, err
		}
		b, err := prepare(ctx, opts, name, embedded("java/Kernels.java"), []string{javac}, func(dir string) error {
			return compile(ctx, dir, javac, hintJava, "-d", ".", "Kernels.java")
		})
		if err != nil {
			return nil, err
		}
		return b.run(ctx, opts, java, slices.Concat(javaFlags, []string{"-cp", b.dir, "Kernels"})...)
	case NodeJS:
		node, err := lookup(opts, "node", hintNode)
		if err != nil {
			return nil, err
		}
		b, err := prepare(ctx, opts, name, embedded("js/kernels.js"), nil, nil)
		if err != nil {
			return nil, err
		}
		return b.run(ctx, opts, node, filepath.Join(b.dir, "kernels.js"))
	case PHP, PHPJIT:
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
		p, err := b.run(ctx, opts, php, slices.Concat(flags, []string{filepath.Join(b.dir, "kernels.php")})...)
		if err != nil {
			return nil, err
		}
		if name == PHPJIT && !strings.Contains(p.Runtime, ", JIT ") {
			p.Close()
			return nil, notInstalled{fmt.Sprintf("php-jit: opcache's JIT is not available in %s (%s): %s", php, p.Runtime, hint)}
		}
		return p, nil
	case NodeWasm:
		node, err := lookup(opts, "node", hintNode)
		if err != nil {
			return nil, err
		}
		files, err := nodeWasmFiles(opts)
		if err != nil {
			return nil, err
		}
		b, err := prepare(ctx, opts, name, files, nil, nil)
		if err != nil {
			return nil, err
		}
		return b.run(ctx, opts, node, filepath.Join(b.dir, "driver.mjs"), filepath.Join(b.dir, "kernels.wasm"), filepath.Join(b.dir, "catalogue.json"))
	}
	return nil, fmt.Errorf("unknown peer %q: valid peers are %s, and %s", name, strings.Join(Names(), ", "), NodeWasm)
}

// notInstalled is an ErrNotInstalled with the install hint in its message.
type notInstalled struct{ msg string }

func (e notInstalled) Error() string        { return e.msg }
func (e notInstalled) Is(target error) bool { return target == ErrNotInstalled }

// lookup finds the program the peer needs, under its usual name or opts.Commands's.
func lookup(opts Options, program, hint string) (string, error) {
	name := program
	if c, ok := opts.Commands[program]; ok && c != "" {
		name = c
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", notInstalled{fmt.Sprintf("%s not installed: %s", name, hint)}
	}
	return path, nil
}

// compile runs a compiler in dir, turning a missing part of the toolchain into ErrNotInstalled.
func compile(ctx context.Context, dir, compiler, hint string, args ...string) error {
	cmd := exec.CommandContext(ctx, compiler, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", filepath.Base(compiler), context.Cause(ctx))
	}
	msg := strings.TrimSpace(string(out))
	for _, missing := range []string{"file not found", "No such file", "doesn't exist", "not found", "cannot find", "unable to find"} {
		if strings.Contains(msg, missing) {
			return notInstalled{fmt.Sprintf("%s cannot build the driver, a part of its toolchain is missing (%s): %s", filepath.Base(compiler), firstLine(msg), hint)}
		}
	}
	return fmt.Errorf("%s %s: %w: %s", filepath.Base(compiler), strings.Join(args, " "), err, msg)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// built is a driver in the cache: its directory and what preparing it cost.
type built struct {
	name    string
	dir     string
	setup   Setup
	cleanup func()
}

// run starts the driver program in b's directory and waits for its ready line.
func (b *built) run(ctx context.Context, opts Options, program string, args ...string) (*Process, error) {
	t0 := time.Now()
	p, err := startCommand(ctx, b.name, append([]string{program}, args...), b.dir, opts)
	if err != nil {
		b.done()
		return nil, err
	}
	p.cleanup = b.cleanup
	if err := p.ready(ctx); err != nil {
		p.Close()
		return nil, err
	}
	p.Setup = b.setup
	p.Setup.Start = time.Since(t0)
	return p, nil
}

func (b *built) done() {
	if b.cleanup != nil {
		b.cleanup()
	}
}

// DefaultCacheDir returns the directory Options.CacheDir defaults to,
// os.UserCacheDir()/wasmgap/peers, or "" when the user has no cache directory.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, filepath.FromSlash(cacheNS))
}

// file is one file of a driver, as prepare writes it.
type file struct {
	name string
	data []byte
}

// embedded is the driver source at path in sources, as one file; the sources are built
// into the binary, so a missing one is a programming error.
func embedded(path string) []file {
	data, err := fs.ReadFile(sources, path)
	if err != nil {
		panic("peers: " + err.Error())
	}
	return []file{{name: filepath.Base(path), data: data}}
}

// prepare puts the peer's files in the cache directory, under a name derived from the
// files, the build's inputs (the compiler's path, size and time, so an upgraded compiler
// builds anew) and the peer's name, and runs build there once. A nil build only copies.
func prepare(ctx context.Context, opts Options, name string, files []file, inputs []string, build func(dir string) error) (*built, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var err error
	root := opts.CacheDir
	if root == "" {
		root = DefaultCacheDir()
	}
	b := &built{name: name}
	if root == "" {
		if root, err = os.MkdirTemp("", "wasmgap-peers-"); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		b.cleanup = removeAll(root)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("%s: cache directory: %w", name, err)
	}
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "\x00%s %d\x00", f.name, len(f.data))
		h.Write(f.data)
	}
	for _, in := range append([]string{name}, inputs...) {
		fmt.Fprintf(h, "\x00%s", in)
		if real, err := filepath.EvalSymlinks(in); err == nil {
			if fi, err := os.Stat(real); err == nil {
				fmt.Fprintf(h, "\x00%s %d %d", real, fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}
	b.dir = filepath.Join(root, name+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(b.dir); err == nil {
		b.setup.Cached = true
		return b, nil
	}
	tmp, err := os.MkdirTemp(root, "."+name+"-")
	if err != nil {
		b.done()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(tmp, f.name), f.data, 0o644); err != nil {
			b.done()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if build != nil {
		t0 := time.Now()
		if err := build(tmp); err != nil {
			b.done()
			if errors.Is(err, ErrNotInstalled) {
				return nil, err
			}
			return nil, fmt.Errorf("%s: build the driver: %w", name, err)
		}
		b.setup.Build = time.Since(t0)
	}
	// Another process may have built the same driver meanwhile: either copy serves.
	if err := os.Rename(tmp, b.dir); err != nil {
		if _, statErr := os.Stat(b.dir); statErr != nil {
			b.done()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return b, nil
}
