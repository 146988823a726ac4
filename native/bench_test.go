package native_test

import (
	"flag"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/kernels"
)

// kernelArgs are the arguments BenchmarkKernel calls its kernels with, as name=value pairs
// joined by commas ("n=2,m=5"), each for the kernels that have that parameter; empty: the
// catalogue's defaults (the articles' sizes). scripts/check-timing sets them to the
// harness's, one kernel per process.
var kernelArgs = flag.String("kernel-args", "", "the kernels' parameters as name=value pairs joined by commas (default: the catalogue's defaults)")

// BenchmarkKernel times each kernel's native call as `go test -bench` does: `go tool task
// check-timing` (scripts/check-timing) sets its ns/op beside the harness's median.
func BenchmarkKernel(b *testing.B) {
	text := map[string]string{}
	for _, pair := range strings.Split(*kernelArgs, ",") {
		if name, value, ok := strings.Cut(pair, "="); ok {
			text[name] = value
		}
	}
	named, err := runner.ParseArgs(text)
	if err != nil {
		b.Fatalf("-kernel-args: %v", err)
	}
	for _, k := range kernels.All() {
		own := map[string]int{}
		for _, p := range k.Params {
			if v, ok := named[p.Name]; ok {
				own[p.Name] = v
			}
		}
		args, err := k.Args(own)
		if err != nil {
			continue // a parameter of another kernel, out of this one's range: -test.bench chose that one
		}
		b.Run(k.Name, func(b *testing.B) {
			for b.Loop() {
				k.Call(args)
			}
		})
	}
}
