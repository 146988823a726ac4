package main

import (
	"fmt"
	"io"
)

func runLoad(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "wasmgap load: not built yet")
	return 1
}
