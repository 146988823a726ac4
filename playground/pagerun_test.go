package playground

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/wasmgap/wasmgap/internal/results"
)

// TestBatchIsOneStoredRun: the cells of one batch are one stored run, in the order they
// ran; a cell without a batch is a run of its own; a malformed batch is refused.
func TestBatchIsOneStoredRun(t *testing.T) {
	ctx := context.Background()
	store, err := results.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ts := fakeServer(t, Options{Engines: []string{"native", "wazero-interpreter"}, Results: store}, instantRun)
	var ids []int64
	for _, body := range []string{
		`{"kernel":"fib_it","engine":"native","args":{"n":92},"runs":1,"batch":"0123456789abcdef-A"}`,
		`{"kernel":"fib_it","engine":"wazero-interpreter","args":{"n":92},"runs":1,"batch":"0123456789abcdef-A"}`,
		`{"kernel":"fib_it","engine":"native","args":{"n":92},"runs":1,"batch":"0123456789abcdef-B"}`,
		`{"kernel":"fib_it","engine":"native","args":{"n":92},"runs":1}`,
	} {
		resp := postRun(t, ts.URL, body)
		events := readEvents(t, resp.Body)
		last := events[len(events)-1]
		if last.Type != "result" || last.Run == 0 {
			t.Fatalf("%s: last event %+v, want a stored result", body, last)
		}
		ids = append(ids, last.Run)
	}
	if ids[0] != ids[1] || ids[2] == ids[0] || ids[3] == ids[0] || ids[3] == ids[2] {
		t.Errorf("run ids %v: want the first two cells (one batch) in one run, the others apart", ids)
	}
	run, err := store.Get(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Report.Results) != 2 || run.Report.Results[0].Engine != "native" || run.Report.Results[1].Engine != "wazero-interpreter" {
		t.Errorf("run %d: %+v, want native then wazero-interpreter", ids[0], run.Report.Results)
	}
	for _, bad := range []string{"short", "0123456789abcdef/../x", "0123456789abcdef 0123"} {
		resp := postRun(t, ts.URL, `{"kernel":"fib_it","engine":"native","args":{"n":92},"batch":"`+bad+`"}`)
		var e apiError
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusBadRequest || e.Field != "batch" {
			t.Errorf("batch %q: %d %+v, want 400 naming batch", bad, resp.StatusCode, e)
		}
	}
}
