package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/wasmgap/wasmgap/internal/results"
)

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap version", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap version (or wasmgap --version)\n\nPrints wasmgap's version (its module version, else its commit, else when it was built),\nthe Go it was built with, and the platform.")
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return exitf(stderr, 2, "wasmgap version: unexpected arguments %q: version takes none", fs.Args())
	}
	fmt.Fprintf(stdout, "wasmgap %s %s %s/%s\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}

// version is what a person can tell builds apart by: results.Version (the module
// version, else the commit), with the commit's time when the build recorded it; a build
// without either (go build -buildvcs=false, go run) says when its binary was built.
func version() string {
	v := results.Version()
	if v != "devel" {
		if t := buildSetting("vcs.time"); t != "" {
			v += ", committed " + t
		}
		return v
	}
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			return "devel, built " + fi.ModTime().UTC().Format(time.RFC3339)
		}
	}
	return "devel"
}

// buildSetting is the value of one of the binary's build settings, "" without it.
func buildSetting(key string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
