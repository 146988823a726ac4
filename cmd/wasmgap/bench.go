package main

import (
	"fmt"
	"io"
)

func runBench(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "wasmgap bench: not built yet")
	return 1
}
