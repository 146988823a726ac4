package explain

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
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
	// The backend's sections: where Loop 5 ends, and its 688 bytes (nops, then a ret), in
	// two dumps, the second patching the first's last byte.
	code := strings.Repeat("90", 688)
	extra := "[1] {jit-backend-addr\nLoop 5 (fib_rec;/x/kernels.py:25-26~#0 LOAD_FAST) has address 0x10fb to 0x12b0 (bootstrap 0x1070)\n[2] jit-backend-addr}\n" +
		"[3] {jit-backend-dump\nBACKEND x86_64\nCODE_DUMP @1000 +0  " + code + "\n[4] jit-backend-dump}\n" +
		"[5] {jit-backend-dump\nCODE_DUMP @1200 +175  C3\n[6] jit-backend-dump}\n"
	traces, mc := parsePyPyLog(io.MultiReader(f, strings.NewReader(extra)))
	if len(traces) != 1 || traces[0].loop != "5" || traces[0].firstFunction() != "fib_rec" || traces[0].end != 688 {
		t.Fatalf("got %d traces (%+v), want Loop 5 of fib_rec, 688 bytes", len(traces), traces)
	}
	c, ok := traces[0].machine(mc)
	if !ok || c.Addr != 0x1000 || len(c.Bytes) != 688 || c.Bytes[687] != 0xc3 || c.Bytes[0] != 0x90 || c.Notes[251] == "" {
		t.Errorf("machine code: %v, at %#x, %d bytes; want 688 bytes at 0x1000 ending in the patched ret, the operation at +251 as a note", ok, c.Addr, len(c.Bytes))
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
	recursive, machine, traces := 0, 0, 0
	for _, l := range ls {
		if l.Instructions == 0 || l.Bytes == 0 {
			t.Errorf("%s: kind %s, %d instructions, %d bytes; want both", l.Tier, l.Kind, l.Instructions, l.Bytes)
		}
		switch l.Kind {
		case KindMachine:
			machine++
		case KindTrace:
			traces++
		}
		recursive += l.RecursiveCalls
	}
	if recursive == 0 || machine == 0 || machine != traces || ls[0].Kind != KindMachine || ls[0].Instructions < 10 {
		t.Errorf("%d machine-code listings, %d traces, %d recursive calls in all, %d instructions in the first; want as many of each, some recursion and at least 10\n%s",
			machine, traces, recursive, ls[0].Instructions, dump(ls[0]))
	}
}
