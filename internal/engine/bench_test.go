package engine_test

import (
	"context"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
	_ "github.com/wasmgap/wasmgap/internal/engine/wazero"
	_ "github.com/wasmgap/wasmgap/internal/engine/yaegi"
	"github.com/wasmgap/wasmgap/kernels"
	_ "github.com/wasmgap/wasmgap/native"
)

// benchArgs are small arguments that every engine runs in well under a second per call
// and that stay under wazero's interpreter stack limit.
func benchArgs(k *kernels.Kernel) []int {
	switch k.Name {
	case "fib_it":
		return []int{40}
	case "fib_rec":
		return []int{25}
	case "ack", "ack_while":
		return []int{3, 6}
	}
	if len(k.Params) == 2 {
		return []int{20_500, 200}
	}
	return []int{100_000}
}

// BenchmarkEngines times every kernel on every engine in this process, so that
// `go test -bench Engines ./internal/engine | benchstat` compares engines and commits. Engines that
// cannot load here (for example without kernels.wasm) are skipped with the reason.
func BenchmarkEngines(b *testing.B) {
	ctx := context.Background()
	for _, name := range engine.Names() {
		b.Run(name, func(b *testing.B) {
			e, err := engine.New(name)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := e.Load(ctx); err != nil {
				b.Skipf("%s does not load here: %v", name, err)
			}
			defer e.Close(ctx)
			for _, k := range kernels.All() {
				args := benchArgs(k)
				b.Run(k.Name, func(b *testing.B) {
					want := k.Expected(args)
					if got, err := e.Run(ctx, k, args); err != nil || got != want {
						b.Fatalf("%s on %s = %d, %v; want %d", k.Label(args), name, got, err, want)
					}
					for b.Loop() {
						e.Run(ctx, k, args)
					}
				})
			}
		})
	}
}
