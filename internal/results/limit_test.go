package results

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// bigRun is a run of 8 cells of 100 samples each: some tens of KB stored.
func bigRun(i int) Run {
	var cells []measure.Result
	for e := range 8 {
		samples := make([]float64, 100)
		for j := range samples {
			samples[j] = float64(1000 + i*1000 + e*100 + j)
		}
		cells = append(cells, cell("fib_rec", []int{20 + e}, "browser-js", samples...))
	}
	return NewRun(SourceBrowser, testReport("linux", 8, cells...))
}

// Past its byte limit the store refuses a run with ErrFull, naming both sizes, and keeps
// nothing of it; the runs stored stay readable, and a delete (SQLite) or a higher limit
// makes room again.
func TestStoreByteLimit(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		s, ctx := open(t, dsn), context.Background()
		if got := s.MaxBytes(); got != DefaultMaxBytes {
			t.Errorf("MaxBytes() = %d, want the default %d", got, DefaultMaxBytes)
		}
		empty, err := s.Bytes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		limit := empty + 256<<10
		s.SetMaxBytes(limit)
		saved := 0
		var full error
		for i := range 200 {
			if _, err := s.Save(ctx, bigRun(i)); err != nil {
				full = err
				break
			}
			saved++
		}
		var fe *FullError
		if !errors.Is(full, ErrFull) || !errors.As(full, &fe) || fe.Max != limit || fe.Bytes <= limit {
			t.Fatalf("after %d runs: %v, want a FullError past %d bytes", saved, full, limit)
		}
		if saved == 0 || !strings.Contains(full.Error(), "nothing of the run was stored") {
			t.Errorf("%d runs stored before the refusal %q", saved, full)
		}
		t.Logf("%d runs stored in %d bytes, then: %v", saved, limit-empty, full)
		list, err := s.List(ctx, Filter{Limit: 1000})
		if err != nil || len(list) != saved {
			t.Fatalf("%d runs listed (%v), want the %d stored: the refused one left nothing", len(list), err, saved)
		}
		// The size of a run is estimated before it is written: the store may pass its
		// limit by what one run's estimate missed, never by more.
		if n, err := s.Bytes(ctx); err != nil || n > limit+runBytes(bigRun(0)) {
			t.Errorf("the store holds %d bytes (%v), past its limit of %d and a run", n, err, limit)
		}
		if _, err := s.Get(ctx, list[0].ID); err != nil {
			t.Errorf("a stored run: %v", err)
		}
		if !IsPostgres(dsn) {
			// SQLite's freed pages are reused: a delete makes room.
			if _, err := s.Delete(ctx, Filter{IDs: []int64{list[len(list)-1].ID, list[len(list)-2].ID}}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Save(ctx, bigRun(1000)); err != nil {
				t.Errorf("a run after a delete: %v", err)
			}
		}
		s.SetMaxBytes(0)
		if _, err := s.Save(ctx, bigRun(1001)); err != nil {
			t.Errorf("a run under the default limit: %v", err)
		}
	})
}

// A run that holds one cell twice is refused, naming the cell and both places, and
// nothing of it is stored: a run counts once in each cell's distribution.
func TestSaveRefusesDuplicateCell(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		s, ctx := open(t, dsn), context.Background()
		run := NewRun(SourceBrowser, testReport("linux", 8,
			cell("fib_it", []int{30}, "browser-js", 5), cell("fib_it", []int{31}, "browser-js", 5),
			cell("fib_it", []int{30}, "browser-wasm", 5), cell("fib_it", []int{30}, "browser-js", 1e-9)))
		_, err := s.Save(ctx, run)
		var dup *DuplicateCellError
		if !errors.As(err, &dup) || dup.First != 0 || dup.Second != 3 || !strings.Contains(err.Error(), "cell 4 is fib_it(30) on browser-js again (as cell 1)") {
			t.Fatalf("Save of a run with a cell twice: %v, want a DuplicateCellError naming fib_it(30) on browser-js", err)
		}
		d, err := s.Distribution(ctx, Filter{Kernel: "fib_it", Args: "30"}, "")
		if err != nil || len(d.Engines) != 0 {
			t.Errorf("after the refusal the distribution holds %+v (%v), want nothing", d.Engines, err)
		}
	})
}
