package results

import (
	"context"
	"errors"
	"testing"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
)

// TestAppendMakesOneRun: a run saved with one cell and appended two more is one run of
// three cells, in order, whose plan is that of a run saved with the three at once; it
// compares with such a run cell by cell, and its distributions count each cell.
func TestAppendMakesOneRun(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		s, ctx := open(t, dsn), context.Background()
		a := cell("fib_it", []int{40}, "native", 10, 11, 12)
		b := cell("fib_it", []int{40}, "wazero-interpreter", 100, 110, 120)
		c := cell("ack", []int{2, 3}, "native", 5, 6, 7)
		c.Runtime = "test runtime 1.0"
		id, err := s.Save(ctx, NewRun(SourceServer, testReport("linux", 2, a)))
		if err != nil {
			t.Fatal(err)
		}
		env := testReport("linux", 2).Environment
		env.Runtimes = []report.Runtime{{Engine: "native", Version: "test runtime 1.0"}}
		if err := s.Append(ctx, id, nil, env); err == nil {
			t.Error("Append of no cells: no error")
		}
		if err := s.Append(ctx, id, []measure.Result{b, c}, env); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(got.Report.Results); n != 3 || got.Report.Results[1].Engine != "wazero-interpreter" || got.Report.Results[2].Kernel != "ack" {
			t.Fatalf("run %d holds %d cells %+v, want the three in order", id, n, got.Report.Results)
		}
		whole := NewRun(SourceServer, testReport("linux", 2, a, b, c))
		if got.Plan != whole.Plan {
			t.Errorf("plan %s, want %s (the three cells')", got.Plan, whole.Plan)
		}
		if len(got.Report.Environment.Runtimes) != 1 {
			t.Errorf("environment %+v, want the appended runtimes", got.Report.Environment)
		}
		other, err := s.Save(ctx, whole)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := s.Get(ctx, other)
		cmp, err := report.Compare(got.Report, o.Report)
		if err != nil || len(cmp.Changes) != 3 {
			t.Errorf("compare: %d changes (%v), want 3 cells in common", len(cmp.Changes), err)
		}
		list, err := s.List(ctx, Filter{})
		if err != nil || len(list) != 2 || len(list[1].Cells) != 3 {
			t.Errorf("List: %+v (%v), want two runs of three cells", list, err)
		}
		if err := s.Append(ctx, 9999, []measure.Result{a}, env); !errors.Is(err, ErrNotFound) {
			t.Errorf("Append to a missing run: %v, want ErrNotFound", err)
		}
	})
}
