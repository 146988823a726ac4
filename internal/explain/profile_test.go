package explain

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/wasm"
)

func TestAttribute(t *testing.T) {
	l := Listing{Addr: 0x1000, Bytes: 8, Lines: []Line{{Offset: 0}, {Offset: 1}, {Offset: 6}}}
	ips := []uint64{0x1000, 0x1003, 0x1005, 0x1006, 0x1007, 0x1008, 0xfff, 0x2000}
	attribute(&l, ips, time.Second)
	got := []int{l.Lines[0].Samples, l.Lines[1].Samples, l.Lines[2].Samples}
	if got[0] != 1 || got[1] != 2 || got[2] != 2 {
		t.Errorf("samples per line %v, want [1 2 2]", got)
	}
	if p := l.Profile; p.Samples != 8 || p.InFunction != 5 || p.Elsewhere != 3 {
		t.Errorf("profile %+v, want 8 samples, 5 in the function, 3 elsewhere", p)
	}
}

// TestWazeroProfileFallsInTheFunction samples fib_rec on wazero's compiler in this process:
// the samples perf attributes to the listing add up, and most of a recursive kernel's time
// is in its own function.
func TestWazeroProfileFallsInTheFunction(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles kernels.wasm")
	}
	if _, err := wasm.Embedded(); err != nil {
		t.Skipf("kernels.wasm not built: %v", err)
	}
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	k, _ := kernels.Lookup("fib_rec")
	rep, err := Explain(context.Background(), k, []int{20}, []string{"wazero-compiler"}, Options{Profile: true, ProfileTime: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e := rep.Engines[0]
	if e.Refused != "" {
		t.Fatal(e.Refused)
	}
	l := e.Listings[0]
	if l.RecursiveCalls < 1 || l.Instructions < 10 {
		t.Errorf("%d instructions, %d recursive calls; want at least 10 and 1", l.Instructions, l.RecursiveCalls)
	}
	p := l.Profile
	if p == nil || p.Refused != "" {
		t.Skipf("no profile: %+v", p)
	}
	sum := 0
	for _, ln := range l.Lines {
		sum += ln.Samples
	}
	if sum != p.InFunction || p.InFunction+p.Elsewhere != p.Samples || p.InFunction == 0 {
		t.Errorf("lines sum to %d; profile %+v: want the lines to add up to in_function > 0, and in_function + elsewhere = samples", sum, p)
	}
}

func TestPerfMissingIsARefusal(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := perfRecord(context.Background(), 1, time.Millisecond, nil)
	if !errors.Is(err, errNoTool) {
		t.Errorf("perf missing: %v, want errNoTool", err)
	}
}
