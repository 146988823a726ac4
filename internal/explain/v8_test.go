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
				if l.Instructions < 10 || l.RecursiveCalls != 2 {
					t.Errorf("%s: %d instructions, %d recursive calls; want at least 10, and FibRec's 2\n%s", l.Tier, l.Instructions, l.RecursiveCalls, dump(l))
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

// TestNodeWasmOptListsTheOptimisedModule: node-wasm-opt's listing is V8's code of the
// module after wasm-opt, TurboFan's first after the warm-up (V8's default tiering), with
// FibRec's two recursive calls found in the optimised module.
func TestNodeWasmOptListsTheOptimisedModule(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed: apt-get install nodejs")
	}
	if _, err := exec.LookPath("wasm-opt"); err != nil {
		t.Skip("wasm-opt not installed: apt-get install binaryen")
	}
	k, _ := kernels.Lookup("fib_rec")
	ls, err := explainNodeWasm(context.Background(), request{engine: "node-wasm-opt", k: k, args: []int{20},
		opts: Options{WarmupTime: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) == 0 || ls[0].Tier != "V8 TurboFan" {
		t.Fatalf("%d listings, the first not TurboFan's: %+v", len(ls), ls)
	}
	for _, l := range ls {
		if !strings.HasPrefix(l.From, "wasm-opt -O3, then node --print-wasm-code") {
			t.Errorf("%s: from %q, want the module after wasm-opt", l.Tier, l.From)
		}
		if l.Instructions < 10 || l.RecursiveCalls != 2 {
			t.Errorf("%s: %d instructions, %d recursive calls; want at least 10, and FibRec's 2\n%s", l.Tier, l.Instructions, l.RecursiveCalls, dump(l))
		}
	}
}

func TestSlotsByOrder(t *testing.T) {
	wasmLines := []Line{{Text: "  call 1368 <runtime.morestack_noctxt>", Call: true}, {Text: "i32.const 1"},
		{Text: "    call 1655 <f>", Call: true, Recursive: true}, {Text: "call_indirect 0", Call: true}, {Text: "call 1655 <f>", Call: true, Recursive: true}}
	call := func(abs uint64) Line { return Line{Call: true, abs: abs} }
	tests := []struct {
		name    string
		machine []Line
		want    []uint64
	}{
		{"in order, then stubs", []Line{call(0x10), {Text: "mov"}, call(0x20), call(0x20), call(0x30), call(0x30)}, []uint64{0x20}},
		{"one target for both kinds", []Line{call(0x10), call(0x10), call(0x10)}, nil},
		{"fewer machine calls", []Line{call(0x10), call(0x20)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slotsByOrder(wasmLines, tt.machine)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for _, w := range tt.want {
				if !got[w] {
					t.Errorf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// TestNodeWasmProfileFallsInTheFunction samples node while it runs fib_rec on TurboFan:
// the samples on the listing's lines add up to those that fell in it, most of them.
func TestNodeWasmProfileFallsInTheFunction(t *testing.T) {
	for _, tool := range []string{"node", "perf"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	if _, err := wasm.Embedded(); err != nil {
		t.Skipf("kernels.wasm not built: %v", err)
	}
	k, _ := kernels.Lookup("fib_rec")
	ls, err := explainNodeWasm(context.Background(), request{engine: "node-wasm-turbofan", k: k, args: []int{20},
		opts: Options{WarmupTime: 300 * time.Millisecond, Profile: true, ProfileTime: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	p := ls[0].Profile
	if p == nil || p.Refused != "" {
		t.Skipf("no profile: %+v", p)
	}
	sum := 0
	for _, ln := range ls[0].Lines {
		sum += ln.Samples
	}
	if sum != p.InFunction || p.InFunction+p.Elsewhere != p.Samples || p.InFunction*2 < p.Samples {
		t.Errorf("lines sum to %d; profile %+v: want in_function = the lines' sum, in_function + elsewhere = samples, and most samples in FibRec", sum, p)
	}
}
