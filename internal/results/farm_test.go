package results

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// TestJobStoredOnce: a farm job's cell is stored once, whichever run tries again, and
// the run keeps the name and description of its machine.
func TestJobStoredOnce(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		s, ctx := open(t, dsn), context.Background()
		a := cell("fib_rec", []int{30}, "native", 10, 11, 12)
		b := cell("fib_it", []int{30}, "native", 1, 2, 3)
		run := NewRun(SourceCLI, testReport("linux", 8, a))
		run.MachineName, run.MachineDesc = "agent-a", json.RawMessage(`{"cpu":"test"}`)
		id, err := s.SaveJob(ctx, run, JobCell{Job: "r1-0-0", Agent: "agent-a"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SaveJob(ctx, run, JobCell{Job: "r1-0-0", Agent: "agent-b"}); !errors.Is(err, ErrDuplicateJob) {
			t.Errorf("the same job saved again in a new run: %v, want ErrDuplicateJob", err)
		}
		if err := s.AppendJob(ctx, id, a, run.Report.Environment, JobCell{Job: "r1-0-0", Agent: "agent-b"}); !errors.Is(err, ErrDuplicateJob) {
			t.Errorf("the same job appended: %v, want ErrDuplicateJob", err)
		}
		if err := s.AppendJob(ctx, id, b, run.Report.Environment, JobCell{Job: "r1-0-1", Agent: "agent-b"}); err != nil {
			t.Fatal(err)
		}
		// The unique key holds where the early check is passed by: a direct insert.
		dup := NewRun(SourceCLI, testReport("linux", 8, b))
		dup.jobs = []JobCell{{Job: "r1-0-1"}}
		if _, err := s.Save(ctx, dup); !errors.Is(err, ErrDuplicateJob) {
			t.Errorf("a second row of job r1-0-1: %v, want ErrDuplicateJob from the unique key", err)
		}
		// Cells of no job repeat freely.
		if _, err := s.Save(ctx, NewRun(SourceCLI, testReport("linux", 8, b))); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Save(ctx, NewRun(SourceCLI, testReport("linux", 8, b))); err != nil {
			t.Fatal(err)
		}
		jobs, err := s.Jobs(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := []JobCell{{"r1-0-0", "agent-a"}, {"r1-0-1", "agent-b"}}; !reflect.DeepEqual(jobs, want) {
			t.Errorf("jobs of the run: %v, want %v", jobs, want)
		}
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.MachineName != "agent-a" || string(got.MachineDesc) != `{"cpu":"test"}` || len(got.Report.Results) != 2 {
			t.Errorf("stored run: machine %q %s, %d cells; want agent-a, its description, 2 cells", got.MachineName, got.MachineDesc, len(got.Report.Results))
		}
		if err := s.SetPartial(ctx, id, "stopped"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Get(ctx, id); got.Report.Method.Partial != "stopped" {
			t.Errorf("partial after SetPartial: %q", got.Report.Method.Partial)
		}
	})
}
