package report

import (
	"math"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// TestMachines: each machine's ratio divides by its own native median, and the spread
// across machines is half the range of the ratios over their median.
func TestMachines(t *testing.T) {
	cell := func(engine string, median float64) measure.Result {
		return measure.Result{Kernel: "fib_rec", Args: []int{30}, Engine: engine, Median: median}
	}
	a := Report{Results: []measure.Result{cell("wazero-compiler", 300), cell("native", 100)}}
	b := Report{Results: []measure.Result{cell("native", 200), cell("wazero-compiler", 500)}}
	c := Report{Results: []measure.Result{cell("native", 50), {Kernel: "fib_rec", Args: []int{30}, Engine: "wazero-compiler", Failure: "timed out"}}}
	rows := Machines([]Report{a, b, c})
	if len(rows) != 2 || rows[0].Engine != "native" || rows[1].Engine != "wazero-compiler" {
		t.Fatalf("rows: %+v; want native's, then wazero-compiler's", rows)
	}
	r := rows[1]
	if math.Abs(r.Ratios[0]-3) > 1e-9 || math.Abs(r.Ratios[1]-2.5) > 1e-9 || !math.IsNaN(r.Ratios[2]) {
		t.Errorf("ratios %v; want 3, 2.5 and none for the failed cell", r.Ratios)
	}
	// Ratios 3 and 2.5: half the range 0.25 over the median 2.75.
	if want := 0.25 / 2.75 * 100; math.Abs(r.Spread-want) > 1e-9 {
		t.Errorf("spread %v; want %v", r.Spread, want)
	}
	var b2 strings.Builder
	if err := WriteMachines(&b2, []string{"a", "b", "c"}, []Report{a, b, c}, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"100 ns", "×3.00", "×2.50", "±9.1%"} {
		if !strings.Contains(b2.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b2.String())
		}
	}
}
