package native_test

import (
	"flag"
	"strconv"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/kernels"
)

// kernelArgs are the arguments BenchmarkKernel calls each kernel with, comma-separated
// ("2,5"); empty: the catalogue's defaults (the articles' sizes). scripts/check-timing sets
// them to the harness's, one kernel per process.
var kernelArgs = flag.String("kernel-args", "", "the arguments of the kernels' calls, comma-separated (default: the catalogue's defaults)")

// BenchmarkKernel times each kernel's native call as `go test -bench` does: `go tool task
// check-timing` (scripts/check-timing) sets its ns/op beside the harness's median.
func BenchmarkKernel(b *testing.B) {
	for _, k := range kernels.All() {
		args := k.Defaults()
		if *kernelArgs != "" {
			args = nil
			for _, f := range strings.Split(*kernelArgs, ",") {
				v, err := strconv.Atoi(f)
				if err != nil {
					b.Fatalf("-kernel-args %q: %v", *kernelArgs, err)
				}
				args = append(args, v)
			}
		}
		if err := k.Check(args); err != nil {
			continue // the arguments of another kernel
		}
		b.Run(k.Name, func(b *testing.B) {
			for b.Loop() {
				k.Call(args)
			}
		})
	}
}
