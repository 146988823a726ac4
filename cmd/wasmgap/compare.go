package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wasmgap/wasmgap/internal/report"
)

func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", report.FormatTable, "output format: "+strings.Join(report.ComparisonFormats(), ", "))
	alpha := fs.Float64("alpha", report.Alpha, "significance level: a change is reported when the Mann–Whitney U test's p is below it (benchstat's default)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap compare [--format F] [--alpha A] old.json new.json")
		fmt.Fprintln(fs.Output(), "\nCompares two runs of `wasmgap bench --format json`: each cell's change in median time per call,")
		fmt.Fprintln(fs.Output(), "reported when the Mann–Whitney U test's p is below --alpha and both sides have enough samples,")
		fmt.Fprintln(fs.Output(), "else \"~ no significant difference\" with the p-value, as benchstat decides.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if !slices.Contains(report.ComparisonFormats(), *format) {
		return exitf(stderr, 2, "wasmgap compare: unknown format %q: valid formats are %s", *format, strings.Join(report.ComparisonFormats(), ", "))
	}
	if !(*alpha > 0 && *alpha < 1) {
		return exitf(stderr, 2, "wasmgap compare: --alpha %v is out of range: a significance level lies between 0 and 1 (default %v)", *alpha, report.Alpha)
	}
	if fs.NArg() != 2 {
		return exitf(stderr, 2, "wasmgap compare: give two reports, the old and the new (%d given): wasmgap bench --format json > old.json, …, wasmgap compare old.json new.json", fs.NArg())
	}
	var reps [2]report.Report
	for i, path := range fs.Args() {
		f, err := os.Open(path)
		if err != nil {
			return exitf(stderr, 2, "wasmgap compare: %v", err)
		}
		reps[i], err = report.Read(f)
		f.Close()
		if err != nil {
			return exitf(stderr, 2, "wasmgap compare: %s: %v", path, err)
		}
	}
	c, err := report.CompareWith(reps[0], reps[1], report.CompareOptions{Alpha: *alpha})
	if err != nil {
		return exitf(stderr, 2, "wasmgap compare: %v", err)
	}
	oldName, newName := filepath.Base(fs.Arg(0)), filepath.Base(fs.Arg(1))
	if oldName == newName {
		oldName, newName = fs.Arg(0), fs.Arg(1)
	}
	if err := report.WriteComparison(stdout, *format, c, oldName, newName, reps[0], reps[1]); err != nil {
		return exitf(stderr, 1, "wasmgap compare: write: %v", err)
	}
	return 0
}
