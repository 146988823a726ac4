package explain

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/wasm"
)

// TestNodeWasmTiersRunTheirOwnCompiler runs node with each single-tier engine's flags over
// fib_rec after a warm-up long enough for V8's dynamic tiering to move a hot function up:
// node-wasm-liftoff's listing is Liftoff's code alone, node-wasm-turbofan's TurboFan's.
func TestNodeWasmTiersRunTheirOwnCompiler(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed: apt-get install nodejs")
	}
	if _, err := wasm.Embedded(); err != nil {
		t.Skipf("kernels.wasm not built: %v", err)
	}
	k, _ := kernels.Lookup("fib_rec")
	for engineName, tier := range map[string]string{"node-wasm-liftoff": "V8 Liftoff", "node-wasm-turbofan": "V8 TurboFan"} {
		t.Run(engineName, func(t *testing.T) {
			ls, err := explainNodeWasm(context.Background(), request{engine: engineName, k: k, args: []int{20},
				opts: Options{WarmupTime: 500 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range ls {
				if l.Tier != tier {
					t.Errorf("%s listed %s's code; want %s's alone", engineName, l.Tier, tier)
				}
				if l.Instructions < 10 {
					t.Errorf("%s: %d instructions, want at least 10\n%s", l.Tier, l.Instructions, dump(l))
				}
			}
			if len(ls) == 0 {
				t.Errorf("%s: no listing", engineName)
			}
			for _, l := range ls {
				for _, n := range l.Notes {
					if strings.Contains(n, "despite") {
						t.Errorf("%s: %s", engineName, n)
					}
				}
			}
		})
	}
}
