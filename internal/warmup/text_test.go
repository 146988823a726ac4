package warmup

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
)

// The table names every engine and run, draws a sparkline with its marks per run, and
// suggests samples of several calls when calls are short.
func TestWriteText(t *testing.T) {
	step := series(21, phase{n: 300, mean: 500, sd: 10}, phase{n: 1700, mean: 100, sd: 2})
	flat := series(22, phase{n: 2000, mean: 100, sd: 2})
	r := Report{Label: "fib_rec(20)", Method: NewMethod(2, Collection{Samples: 2000, Group: 1}, Options{}),
		Engines: []EngineResult{NewEngineResult("java", []Series{{Times: step, Group: 1, Setup: engine.Setup{Compile: 41_200_000, Instantiate: 1_300_000}}, {Times: flat, Group: 1}}, Options{})}}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"warm-up of fib_rec(20)", "good inconsistent", "warm-up, steady after 300 calls", "#2   flat", "compile 41.2 ms, instantiate 1.3 ms", "java: time per call, log scale", "s", "note: java's calls take", "--group 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("the text lacks %q:\n%s", want, out)
		}
	}
	if got := strings.Count(out, "▁"); got < SparkWidth {
		t.Errorf("%d low sparkline cells, want at least a line of them:\n%s", got, out)
	}
}
