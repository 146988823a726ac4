package driver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/childproc"
)

// NotInstalled returns an error that wraps ErrNotInstalled with msg as its message, which
// names what to install ("lua5.4 not installed: apt-get install lua5.4").
func NotInstalled(msg string) error { return notInstalled{msg} }

// notInstalled is an ErrNotInstalled with the install hint in its message.
type notInstalled struct{ msg string }

func (e notInstalled) Error() string        { return e.msg }
func (e notInstalled) Is(target error) bool { return target == ErrNotInstalled }

// Lookup finds a program under its usual name, or under commands[program] when that is set
// (a path, or a name looked up in PATH); a missing one is NotInstalled with hint.
func Lookup(commands map[string]string, program, hint string) (string, error) {
	name := program
	if c, ok := commands[program]; ok && c != "" {
		name = c
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", notInstalled{fmt.Sprintf("%s not installed: %s", name, hint)}
	}
	return path, nil
}

// Compile runs a compiler in dir, turning a missing part of the toolchain into
// ErrNotInstalled with hint.
func Compile(ctx context.Context, dir, compiler, hint string, args ...string) error {
	cmd := childproc.Command(ctx, compiler, args...)
	cmd.Dir = dir
	out, err := childproc.CombinedOutput(cmd)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", filepath.Base(compiler), context.Cause(ctx))
	}
	msg := strings.TrimSpace(string(out))
	for _, missing := range []string{"file not found", "No such file", "doesn't exist", "not found", "cannot find", "unable to find"} {
		if strings.Contains(msg, missing) {
			return notInstalled{fmt.Sprintf("%s cannot build the driver, a part of its toolchain is missing (%s): %s", filepath.Base(compiler), FirstLine(msg), hint)}
		}
	}
	return fmt.Errorf("%s %s: %w: %s", filepath.Base(compiler), strings.Join(args, " "), err, msg)
}

// FirstLine returns s up to its first newline.
func FirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// File is one file of a driver, as Prepare writes it.
type File struct {
	Name string
	Data []byte
}

// Built is a driver in the cache: its directory and what preparing it cost.
type Built struct {
	// Name is the driver's name.
	Name string
	// Dir is the driver's directory in the cache.
	Dir string
	// Setup has Build and Cached filled in.
	Setup Setup
	// Args are put before the program's own arguments by Run (a runtime's diagnostic
	// flags: V8's, HotSpot's, LuaJIT's), and Env, when not nil, is its whole environment.
	Args []string
	Env  []string
	// Stdout, when set, receives the program's stdout, and the driver answers on its fd 3
	// instead (ProtocolFDEnv): for a runtime that prints on stdout. Only a driver that
	// honours ProtocolFDEnv may be given one.
	Stdout  io.Writer
	cleanup func()
}

// Run starts the driver program in b's directory and waits for its ready line; the
// Process's Setup is b's, with Start filled in.
func (b *Built) Run(ctx context.Context, stderr io.Writer, program string, args ...string) (*Process, error) {
	t0 := time.Now()
	p, err := command(b.Name, slices.Concat([]string{program}, b.Args, args), b.Dir, b.Env, stderr, b.Stdout)
	if err != nil {
		b.Done()
		return nil, err
	}
	p.cleanup = b.cleanup
	if err := p.Ready(ctx); err != nil {
		p.Close()
		return nil, err
	}
	p.Setup = b.Setup
	p.Setup.Start = time.Since(t0)
	return p, nil
}

// Done removes the temporary cache directory, if Prepare made one; call it when b is not
// handed to a Process.
func (b *Built) Done() {
	if b.cleanup != nil {
		b.cleanup()
	}
}

// DefaultCacheDir returns os.UserCacheDir()/sub, or "" when the user has no cache directory.
func DefaultCacheDir(sub string) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, filepath.FromSlash(sub))
}

// Prepare puts a driver's files in the cache directory root, under a name derived from the
// files, the build's inputs (the compiler's path, size and time, so an upgraded compiler
// builds anew) and the driver's name, and runs build there once. A nil build only copies.
// An empty root is a temporary directory that the Process's Close removes.
func Prepare(ctx context.Context, root, name string, files []File, inputs []string, build func(dir string) error) (*Built, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var err error
	b := &Built{Name: name}
	if root == "" {
		if root, err = os.MkdirTemp("", "wasmgap-drivers-"); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		b.cleanup = func() { os.RemoveAll(root) }
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("%s: cache directory: %w", name, err)
	}
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "\x00%s %d\x00", f.Name, len(f.Data))
		h.Write(f.Data)
	}
	for _, in := range append([]string{name}, inputs...) {
		fmt.Fprintf(h, "\x00%s", in)
		if real, err := filepath.EvalSymlinks(in); err == nil {
			if fi, err := os.Stat(real); err == nil {
				fmt.Fprintf(h, "\x00%s %d %d", real, fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}
	b.Dir = filepath.Join(root, name+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(b.Dir); err == nil {
		b.Setup.Cached = true
		return b, nil
	}
	tmp, err := os.MkdirTemp(root, "."+name+"-")
	if err != nil {
		b.Done()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(tmp, f.Name), f.Data, 0o644); err != nil {
			b.Done()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if build != nil {
		t0 := time.Now()
		if err := build(tmp); err != nil {
			b.Done()
			if errors.Is(err, ErrNotInstalled) {
				return nil, err
			}
			return nil, fmt.Errorf("%s: build the driver: %w", name, err)
		}
		b.Setup.Build = time.Since(t0)
	}
	// Another process may have built the same driver meanwhile: either copy serves.
	if err := os.Rename(tmp, b.Dir); err != nil {
		if _, statErr := os.Stat(b.Dir); statErr != nil {
			b.Done()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return b, nil
}

// ProbeVersion runs program with args (a version flag) for at most five seconds and
// returns the first line it prints, or "" when it fails.
func ProbeVersion(program string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := childproc.CombinedOutput(childproc.Command(ctx, program, args...))
	if err != nil {
		return ""
	}
	return FirstLine(strings.TrimSpace(string(out)))
}
