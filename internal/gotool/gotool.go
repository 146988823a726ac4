// Package gotool builds a pinned version of a Go program from the module proxy into
// wasmgap's cache the first time a benchmark needs it, as go.mod pins go-task: the peers a
// benchmark measures wasmgap against (Centrifugo, vegeta) need no install step of their own,
// and every machine runs the same version.
//
// A tool is built once per version with `go install module/cmd@version` (GOBIN pointing at a
// fresh folder beside its final place, then renamed into place), so two benchmarks that
// start at once never see a half-written binary, and a failed build leaves nothing behind.
package gotool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/childproc"
)

// Tool is a Go program at a pinned version.
type Tool struct {
	Name    string // the binary's name, e.g. "vegeta"
	Package string // the main package, e.g. "github.com/tsenart/vegeta/v12"
	Version string // a module version, e.g. "v12.13.0"
	// About says how long the first build takes here, for the line printed before it
	// (e.g. "about 1 min on 2 cores").
	About string
}

// The peers of the benchmarks, pinned.
var (
	Vegeta     = Tool{Name: "vegeta", Package: "github.com/tsenart/vegeta/v12", Version: "v12.13.0", About: "about 1 min on 2 cores"}
	Centrifugo = Tool{Name: "centrifugo", Package: "github.com/centrifugal/centrifugo/v6", Version: "v6.9.1", About: "about 4 min on 2 cores"}
)

// BuildLimit bounds one build: the module download and the compile.
const BuildLimit = 20 * time.Minute

// CacheDir is the folder that holds every built tool: $WASMGAP_TOOLS when set, else
// wasmgap/tools under the user's cache folder (os.UserCacheDir).
func CacheDir() (string, error) {
	if d := os.Getenv("WASMGAP_TOOLS"); d != "" {
		return d, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("the tools' cache: %w (set WASMGAP_TOOLS to a folder)", err)
	}
	return filepath.Join(c, "wasmgap", "tools"), nil
}

// Path is where the tool's binary lives once built, under dir.
func (t Tool) Path(dir string) string {
	return filepath.Join(dir, t.Name+"@"+t.Version, t.Name)
}

// Ensure returns the path of the tool's binary, building it into CacheDir first if it is not
// there; the line before a build, and the build's own errors, go to log.
func (t Tool) Ensure(ctx context.Context, log io.Writer) (string, error) {
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	return t.ensure(ctx, dir, log, goInstall)
}

// builder builds pkg@version's binary into the folder bin.
type builder func(ctx context.Context, pkg, version, bin string) error

func (t Tool) ensure(ctx context.Context, dir string, log io.Writer, build builder) (string, error) {
	final := t.Path(dir)
	if fi, err := os.Stat(final); err == nil && fi.Mode().IsRegular() {
		return final, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build %s: %w", t.Name, err)
	}
	tmp, err := os.MkdirTemp(dir, t.Name+"@"+t.Version+".building-")
	if err != nil {
		return "", fmt.Errorf("build %s: %w", t.Name, err)
	}
	defer os.RemoveAll(tmp) // a failed build leaves nothing; a good one was renamed away
	fmt.Fprintf(log, "building %s %s from the module proxy into %s (first use only, %s)\n",
		t.Name, t.Version, filepath.Dir(final), t.About)
	if err := build(ctx, t.Package, t.Version, tmp); err != nil {
		return "", fmt.Errorf("build %s %s: %w", t.Name, t.Version, err)
	}
	if fi, err := os.Stat(filepath.Join(tmp, t.Name)); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("build %s %s: the build wrote no %s binary", t.Name, t.Version, t.Name)
	}
	// The folder is renamed whole: a reader sees no folder or a finished binary. Another
	// process may have finished first; its binary is as good as this one.
	if err := os.Rename(tmp, filepath.Dir(final)); err != nil {
		if _, serr := os.Stat(final); serr == nil {
			return final, nil
		}
		return "", fmt.Errorf("build %s: %w", t.Name, err)
	}
	return final, nil
}

// goInstall runs `go install pkg@version` with GOBIN=bin, outside any module, with cgo off so
// that the binary depends on no C library, in a process group that dies with this process.
func goInstall(ctx context.Context, pkg, version, bin string) error {
	ctx, cancel := context.WithTimeout(ctx, BuildLimit)
	defer cancel()
	cmd := exec.Command("go", "install", pkg+"@"+version)
	cmd.Dir = bin
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := childproc.Start(cmd); err != nil {
		return fmt.Errorf("start go: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("go install: %w: %s", err, lastLines(out.String(), 8))
		}
		return nil
	case <-ctx.Done():
		childproc.KillGroup(cmd)
		<-done
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("go install: not done within %v", BuildLimit)
		}
		return ctx.Err()
	}
}

// lastLines is the end of a build's output: where its error is.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Installed returns the path of the tool's binary when it is already in CacheDir, for tests
// that run against it when present and skip otherwise.
func (t Tool) Installed() (string, bool) {
	dir, err := CacheDir()
	if err != nil {
		return "", false
	}
	p := t.Path(dir)
	fi, err := os.Stat(p)
	return p, err == nil && fi.Mode().IsRegular()
}
