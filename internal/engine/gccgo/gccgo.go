// Package gccgo is the gccgo engine: the kernels' very Go files (kernels.Source) compiled by
// GCC's Go front end (Debian's gccgo, -O2) into a driver process of package internal/engine/driver,
// beside the native engine's gc build, so that a table says how much of Go's gap to C is
// the language and how much gc's compiler. The driver is built once into the cache
// directory (internal/engine/driver.Prepare); without gccgo, Load fails with the package to install.
//
// Importing the package registers the engine as "gccgo".
package gccgo

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/driver"
	"github.com/wasmgap/wasmgap/internal/engine/driver/goserve"
	"github.com/wasmgap/wasmgap/kernels"
)

// Name is the engine's name (engine.Order places it, last of the Go tiers).
const Name = engine.GCCGo

// Hint says how to install gccgo (Debian 12).
const Hint = "apt-get install gccgo"

func init() {
	engine.Describe(engine.Info{
		Name: Name, Title: "gccgo",
		What:    "the same Go kernel files compiled by GCC's Go front end (gccgo -O2), in a driver process",
		Color:   "#72b7b2",
		Install: Hint,
		Probe:   probe,
	}, func() engine.Engine { return New(Options{}) })
}

// Options configure the engine. The zero value is ready to use.
type Options struct {
	// CacheDir holds the built driver; "" means os.UserCacheDir()/wasmgap/gccgo.
	CacheDir string
	// GCCGo is the compiler, a path or a name looked up in PATH; "" means "gccgo".
	GCCGo string
}

// New returns the engine; Load builds the driver (once) and starts it.
func New(opts Options) *driver.Engine {
	return driver.NewEngine(Name, func(ctx context.Context) (*driver.Process, error) { return Start(ctx, opts) })
}

// Start builds the driver if the cache does not hold it yet, starts it and waits for its
// ready line ("ready go gccgo (Debian 12.2.0-14) 12.2.0 -O2").
func Start(ctx context.Context, opts Options) (*driver.Process, error) {
	b, err := build(ctx, opts)
	if err != nil {
		return nil, err
	}
	return b.Run(ctx, nil, filepath.Join(b.Dir, "driver"))
}

// build builds the driver (gccgo -O2) into the cache if it does not hold it yet: its
// executable is b.Dir/driver.
func build(ctx context.Context, opts Options) (*driver.Built, error) {
	gccgo, err := driver.Lookup(map[string]string{"gccgo": opts.GCCGo}, "gccgo", Hint)
	if err != nil {
		return nil, err
	}
	files, err := Files(driver.ProbeVersion(gccgo, "--version"))
	if err != nil {
		return nil, err
	}
	root := opts.CacheDir
	if root == "" {
		root = driver.DefaultCacheDir("wasmgap/gccgo")
	}
	return driver.Prepare(ctx, root, Name, files, []string{gccgo}, func(dir string) error {
		args := []string{"-O2", "-o", "driver"}
		for _, f := range files {
			args = append(args, f.Name)
		}
		return driver.Compile(ctx, dir, gccgo, Hint, args...)
	})
}

// Files returns the driver's sources: the kernel files as files of package main, the
// protocol's server (goserve.Source) and a main that serves every kernel of the catalogue
// with its parameters' ranges, and says version (gccgo's --version line) in its ready line.
func Files(version string) ([]driver.File, error) {
	var files []driver.File
	for _, name := range kernels.SourceFiles {
		src, err := fs.ReadFile(kernels.Source, name)
		if err != nil {
			return nil, fmt.Errorf("gccgo: %w", err)
		}
		text := strings.Replace(string(src), "\npackage kernels\n", "\npackage main\n", 1)
		if !strings.Contains(text, "\npackage main\n") {
			text = strings.Replace(text, "package kernels\n", "package main\n", 1)
		}
		files = append(files, driver.File{Name: "kernels_" + name, Data: []byte(text)})
	}
	files = append(files,
		driver.File{Name: "serve.go", Data: []byte(goserve.Source("main"))},
		driver.File{Name: "main.go", Data: []byte(mainSource(version))},
	)
	return files, nil
}

// mainSource is the driver's main: the catalogue as goserve.Kernels, each calling the
// kernel's function.
func mainSource(version string) string {
	if version == "" {
		version = "gccgo"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `package main

import "os"

// version is what gccgo --version said when it built this driver.
const version = %q
`, version+" -O2")
	b.WriteString(`

// kernelsServed is the catalogue of package kernels, as written by package internal/engine/gccgo.
var kernelsServed = []Kernel{
`)
	for _, k := range kernels.All() {
		var params, args []string
		for i, p := range k.Params {
			params = append(params, fmt.Sprintf("{Name: %q, Min: %d, Max: %d}", p.Name, p.Min, p.Max))
			args = append(args, fmt.Sprintf("a[%d]", i))
		}
		fmt.Fprintf(&b, "\t{Name: %q, Params: []Param{%s}, Call: func(a []int) int64 { return %s(%s) }},\n",
			k.Name, strings.Join(params, ", "), k.Func, strings.Join(args, ", "))
	}
	b.WriteString(`}

func main() {
	if err := Serve(os.Stdin, os.Stdout, "go", version, kernelsServed); err != nil {
		os.Exit(1)
	}
}
`)
	return b.String()
}

// probe returns gccgo's version line, or "".
func probe() string {
	path, err := driver.Lookup(nil, "gccgo", Hint)
	if err != nil {
		return ""
	}
	return driver.ProbeVersion(path, "--version")
}
