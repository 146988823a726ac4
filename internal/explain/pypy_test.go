package explain

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/kernels"
)

func TestParsePyPyLog(t *testing.T) {
	f, err := os.Open("testdata/pypy-fibrec.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	traces := parsePyPyLog(f)
	if len(traces) != 1 || traces[0].loop != "5" || traces[0].firstFunction() != "fib_rec" || traces[0].end != 688 {
		t.Fatalf("got %d traces (%+v), want Loop 5 of fib_rec, 688 bytes", len(traces), traces)
	}
	l := pypyListing(traces[0], "fib_rec", map[string]bool{"5": true})
	summarize(&l)
	// PyPy inlined fib_rec into itself four times in this trace (two levels deep).
	if l.RecursiveCalls != 4 || l.Instructions < 10 || l.Lines[0].Offset != 251 {
		t.Errorf("%d operations, %d recursive calls, first at +%d; want at least 10, 4 and +251\n%s",
			l.Instructions, l.RecursiveCalls, l.Lines[0].Offset, dump(l))
	}
}

// TestPyPyTraceOfFibRec runs pypy3 with PYPYLOG after the warm-up: fib_rec's traces are
// listed, the recursion marked in them.
func TestPyPyTraceOfFibRec(t *testing.T) {
	if _, err := exec.LookPath("pypy3"); err != nil {
		t.Skip("pypy3 not installed: apt-get install pypy3")
	}
	k, _ := kernels.Lookup("fib_rec")
	ls, err := explainPyPy(context.Background(), request{engine: "pypy", k: k, args: []int{20}, opts: Options{WarmupTime: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	recursive := 0
	for _, l := range ls {
		if l.Kind != KindTrace || l.Instructions == 0 || l.Bytes == 0 {
			t.Errorf("%s: kind %s, %d operations, %d bytes; want a trace with both", l.Tier, l.Kind, l.Instructions, l.Bytes)
		}
		recursive += l.RecursiveCalls
	}
	if recursive == 0 || ls[0].Instructions < 10 {
		t.Errorf("%d listings, %d recursive calls in all, %d operations in the first; want some and at least 10\n%s",
			len(ls), recursive, ls[0].Instructions, dump(ls[0]))
	}
}
