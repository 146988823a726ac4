package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	_ "github.com/wasmgap/wasmgap/internal/engine/wazero" // the wazero pair, for JITPairs
	"github.com/wasmgap/wasmgap/internal/measure"
)

func jitResults() []measure.Result {
	return []measure.Result{
		{Kernel: "fib_rec", Args: []int{25}, Engine: "wazero-interpreter", Median: 3000},
		{Kernel: "fib_rec", Args: []int{25}, Engine: "wazero-compiler", Median: 500},
		{Kernel: "ack", Args: []int{3, 10}, Engine: "wazero-interpreter", Failure: "stack overflow"},
		{Kernel: "ack", Args: []int{3, 10}, Engine: "wazero-compiler", Median: 100},
		{Kernel: "fib_rec", Args: []int{25}, Engine: "native", Median: 200},
	}
}

func TestJITPairs(t *testing.T) {
	for _, p := range JITPairs() {
		if p.Runtime == "wazero" && p.Interpreter == "wazero-interpreter" && p.JIT == "wazero-compiler" {
			return
		}
	}
	t.Errorf("JITPairs() = %+v, want wazero's interpreter and compiler", JITPairs())
}

func TestJITView(t *testing.T) {
	pairs := []JITPair{{Runtime: "wazero", Interpreter: "wazero-interpreter", JIT: "wazero-compiler"}, {Runtime: "PHP", Interpreter: "php", JIT: "php-jit"}}
	rows := JITView(jitResults(), pairs)
	if len(rows) != 2 {
		t.Fatalf("rows = %+v, want fib_rec(25) and ack(3, 10) on wazero only", rows)
	}
	if r := rows[0]; r.Kernel != "fib_rec(25)" || r.InterpreterNs != 3000 || r.JITNs != 500 || r.Ratio != 6 {
		t.Errorf("row 0 = %+v, want 3000 ns over 500 ns: 6×", r)
	}
	if r := rows[1]; r.InterpreterFailure != "stack overflow" || r.Ratio != 0 || r.JITNs != 100 {
		t.Errorf("row 1 = %+v, want the interpreter's failure and no ratio", r)
	}
}

func TestWriteJITFormats(t *testing.T) {
	rep := Report{Results: jitResults()}
	for _, format := range []string{FormatJIT, FormatJITMarkdown, FormatJITJSON, FormatJITCSV} {
		var b bytes.Buffer
		if err := Write(&b, format, rep); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		out := b.String()
		switch format {
		case FormatJITJSON:
			var v struct{ JIT []JITRow }
			if err := json.Unmarshal(b.Bytes(), &v); err != nil || len(v.JIT) != 2 || v.JIT[0].Ratio != 6 {
				t.Errorf("json: %v, %+v", err, v)
			}
		case FormatJITCSV:
			recs, err := csv.NewReader(&b).ReadAll()
			if err != nil || len(recs) != 3 || recs[1][0] != "fib_rec(25)" || recs[1][6] != "6" || recs[2][7] != "stack overflow" {
				t.Errorf("csv: %v, %q", err, recs)
			}
		default:
			for _, want := range []string{"fib_rec(25)", "wazero-interpreter", "wazero-compiler", "stack overflow", "6.0"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s: no %q in\n%s", format, want, out)
				}
			}
		}
	}
}
