package main

import (
	"fmt"
	"io"
)

func runLoadScenario(name string, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "wasmgap load %s: not built yet\n", name)
	return 1
}

func runLoadSeed(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "wasmgap load seed: not built yet")
	return 1
}
