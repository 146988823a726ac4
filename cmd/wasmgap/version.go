package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

func runVersion(args []string, stdout, stderr io.Writer) int {
	version := "(devel)"
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		version = info.Main.Version
	}
	fmt.Fprintf(stdout, "wasmgap %s %s %s/%s\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}
