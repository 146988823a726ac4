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
		fmt.Fprintf(stderr, "wasmgap compare: unknown format %q: valid formats are %s\n", *format, strings.Join(report.ComparisonFormats(), ", "))
		return 2
	}
	if !(*alpha > 0 && *alpha < 1) {
		fmt.Fprintf(stderr, "wasmgap compare: --alpha %v is out of range: a significance level lies between 0 and 1 (default %v)\n", *alpha, report.Alpha)
		return 2
	}
	if fs.NArg() != 2 {
		fmt.Fprintf(stderr, "wasmgap compare: give two reports, the old and the new (%d given): wasmgap bench --format json > old.json, …, wasmgap compare old.json new.json\n", fs.NArg())
		return 2
	}
	var reps [2]report.Report
	for i, path := range fs.Args() {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(stderr, "wasmgap compare:", err)
			return 2
		}
		reps[i], err = report.Read(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "wasmgap compare: %s: %v\n", path, err)
			return 2
		}
	}
	c, err := report.CompareWith(reps[0], reps[1], report.CompareOptions{Alpha: *alpha})
	if err != nil {
		fmt.Fprintln(stderr, "wasmgap compare:", err)
		return 2
	}
	oldName, newName := filepath.Base(fs.Arg(0)), filepath.Base(fs.Arg(1))
	if oldName == newName {
		oldName, newName = fs.Arg(0), fs.Arg(1)
	}
	if err := report.WriteComparison(stdout, *format, c, oldName, newName, reps[0], reps[1]); err != nil {
		fmt.Fprintln(stderr, "wasmgap compare: write:", err)
		return 1
	}
	return 0
}
