package report

import (
	"fmt"
	"io"
	"strings"
)

// writeGoBench writes one line per timed run in Go's benchmark format, so that benchstat
// reads a report as it reads `go test -bench` output (one iteration per line):
//
//	BenchmarkKernel/fib_rec(40)/native  1  412345678 ns/op
//
// Failed cells become comment lines, which benchstat ignores.
func writeGoBench(w io.Writer, r Report) error {
	e := r.Environment
	var b strings.Builder
	fmt.Fprintf(&b, "goos: %s\ngoarch: %s\npkg: github.com/wasmgap/wasmgap\ncpu: %s\n", e.OS, e.Arch, e.CPU)
	fmt.Fprintf(&b, "go: %s\nwazero: %s\nyaegi: %s\n", e.Go, e.Module("wazero"), e.Module("yaegi"))
	for _, res := range r.Results {
		name := "BenchmarkKernel/" + strings.ReplaceAll(res.Label(), " ", "") + "/" + res.Engine
		if res.Failed() {
			fmt.Fprintf(&b, "# %s failed: %s\n", name, res.Failure)
			continue
		}
		for _, s := range res.Samples {
			fmt.Fprintf(&b, "%s\t1\t%d ns/op\n", name, s.Nanoseconds())
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
