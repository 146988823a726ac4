package results

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/warmup"
)

// testStudy is a study of two engines: one flat series, one that steps down after 40
// samples, so that its analysis has changepoints to keep.
func testStudy() warmup.Report {
	flat := make([]float64, 120)
	step := make([]float64, 120)
	for i := range flat {
		flat[i] = 100 + float64(i%3)
		step[i] = 50 + float64(i%5)
		if i < 40 {
			step[i] = 500 + float64(i%7)
		}
	}
	rep := warmup.Report{Kernel: "fib_rec", Args: []int{20}, Label: "fib_rec(20)", Method: warmup.NewMethod(1, warmup.Collection{Samples: 120, Group: 1}, warmup.Options{})}
	rep.Engines = append(rep.Engines,
		warmup.NewEngineResult("native", []warmup.Series{{Times: flat, Group: 1, Timer: "per call", Stopped: "samples"}}, warmup.Options{}),
		warmup.NewEngineResult("java", []warmup.Series{{Times: step, Group: 1, Timer: "per call", Stopped: "samples"}, {Failure: "timed out"}}, warmup.Options{}))
	return rep
}

func TestStudyRoundTrip(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		s, ctx := open(t, dsn), context.Background()
		st := NewStudy(SourceCLI, testStudy())
		id, err := s.SaveStudy(ctx, st)
		if err != nil || id < 1 {
			t.Fatalf("SaveStudy: %d, %v", id, err)
		}
		second, err := s.SaveStudy(ctx, NewStudy(SourceServer, testStudy()))
		if err != nil || second == id {
			t.Fatalf("a second study: %d, %v; want an id of its own", second, err)
		}
		got, err := s.Study(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != id || got.Source != SourceCLI || got.Wasmgap != st.Wasmgap || !got.Created.Equal(st.Created) {
			t.Errorf("study %d: id %d, source %q, wasmgap %q, created %v; want %d, %q, %q, %v", id, got.ID, got.Source, got.Wasmgap, got.Created, id, SourceCLI, st.Wasmgap, st.Created)
		}
		if !reflect.DeepEqual(got.Report, st.Report) {
			t.Errorf("the stored report differs from the saved one:\n got %+v\nwant %+v", got.Report, st.Report)
		}
		if x := got.Report.Engines[1].Runs[0].Analysis; x == nil || len(x.Changepoints) == 0 || got.Report.Engines[1].Runs[1].Failure != "timed out" {
			t.Errorf("java's runs after the round trip: %+v", got.Report.Engines[1].Runs)
		}
		if other, err := s.Study(ctx, second); err != nil || other.Source != SourceServer {
			t.Errorf("study %d: %+v, %v", second, other.Source, err)
		}
		if _, err := s.Study(ctx, second+100); !errors.Is(err, ErrStudyNotFound) {
			t.Errorf("an unknown id: %v, want ErrStudyNotFound", err)
		}
	})
}

func TestSaveStudyRefuses(t *testing.T) {
	s, ctx := open(t, t.TempDir()+"/results.db"), context.Background()
	for _, c := range []struct {
		name string
		rep  warmup.Report
		want string
	}{
		{"no engine", warmup.Report{Kernel: "fib_rec"}, "no engine"},
		{"no kernel", func() warmup.Report { r := testStudy(); r.Kernel = ""; return r }(), "no kernel"},
	} {
		if _, err := s.SaveStudy(ctx, NewStudy(SourceCLI, c.rep)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	s.SetMaxBytes(1)
	if _, err := s.SaveStudy(ctx, NewStudy(SourceCLI, testStudy())); !errors.Is(err, ErrFull) {
		t.Errorf("past the byte limit: %v, want ErrFull", err)
	}
}
