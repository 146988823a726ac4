package main

import (
	"fmt"
	"io"
)

func runChat(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "wasmgap chat: not built yet")
	return 1
}
