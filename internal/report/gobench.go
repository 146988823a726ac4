package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// writeGoBench writes one line per timed sample in Go's benchmark format, so that
// benchstat reads a report as it reads `go test -bench` output, the sample's calls as
// its iterations, and its median with the 95% interval as a comment:
//
//	BenchmarkKernel/fib_it(40)/native  655360  14.93 ns/op
//
// Failed cells become comment lines, which benchstat ignores.
func writeGoBench(w io.Writer, r Report) error {
	e := r.Environment
	var b strings.Builder
	fmt.Fprintf(&b, "goos: %s\ngoarch: %s\npkg: github.com/wasmgap/wasmgap\ncpu: %s\n", e.OS, e.Arch, e.CPU)
	fmt.Fprintf(&b, "go: %s\nwazero: %s\nyaegi: %s\n", e.Go, e.Module("wazero"), e.Module("yaegi"))
	for _, rt := range e.Runtimes {
		fmt.Fprintf(&b, "runtime-%s: %s\n", rt.Engine, rt.Version)
	}
	for _, res := range r.Results {
		name := "BenchmarkKernel/" + strings.ReplaceAll(res.Label(), " ", "") + "/" + res.Engine
		if res.Failed() {
			fmt.Fprintf(&b, "# %s failed: %s\n", name, res.Failure)
			continue
		}
		calls := max(res.Calls, 1)
		for _, s := range res.Samples {
			fmt.Fprintf(&b, "%s\t%d\t%s ns/op\n", name, calls, strconv.FormatFloat(s, 'f', 2, 64))
		}
		fmt.Fprintf(&b, "# %s median %s, 95%% CI %s\n", name, FormatNs(res.Median), intervalText(res))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// intervalText renders a cell's 95% interval: "14.8ns – 15.1ns (±1.0%)", or why there is none.
func intervalText(r measure.Result) string {
	if !r.CI.Valid() {
		return fmt.Sprintf("none (%d samples: a 95%% interval needs 6)", len(r.Samples))
	}
	return fmt.Sprintf("%s – %s (%s)", FormatNs(r.CI.Lo), FormatNs(r.CI.Hi), Spread(r))
}
