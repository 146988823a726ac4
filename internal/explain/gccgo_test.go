package explain

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/kernels"
)

// TestGCCGoListsTheRecursiveCall reads FibRec from the gccgo engine's driver (built by
// gccgo -O2 into the cache): its calls of itself are marked, and its code compares n with
// the kernel's constants.
func TestGCCGoListsTheRecursiveCall(t *testing.T) {
	if _, err := exec.LookPath("gccgo"); err != nil {
		t.Skip("gccgo not installed: apt-get install gccgo")
	}
	k, _ := kernels.Lookup("fib_rec")
	ls, err := explainGCCGo(context.Background(), request{engine: "gccgo", k: k, args: []int{20}})
	if err != nil {
		t.Fatal(err)
	}
	l := ls[0]
	if l.Function != "main.FibRec" || l.Kind != KindMachine || l.RecursiveCalls < 1 || l.Instructions < 10 {
		t.Fatalf("%s: %s, %d instructions, %d recursive calls; want main.FibRec's machine code, at least 10 and 1\n%s",
			l.Function, l.Kind, l.Instructions, l.RecursiveCalls, dump(l))
	}
	cmp := false
	for _, ln := range l.Lines {
		if strings.HasPrefix(ln.Text, "cmp ") && (strings.HasSuffix(ln.Text, ", 0x2") || strings.HasSuffix(ln.Text, ", 0x3")) {
			cmp = true
		}
	}
	if !cmp {
		t.Errorf("no comparison of n with 2 or 3 in main.FibRec\n%s", dump(l))
	}
}
