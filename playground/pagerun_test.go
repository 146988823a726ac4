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
	// The stored method says how many worker processes measured each cell.
	events := readEvents(t, postRun(t, ts.URL, `{"kernel":"fib_it","engine":"native","args":{"n":92},"runs":3}`).Body)
	if last := events[len(events)-1]; last.Run == 0 {
		t.Fatalf("last event %+v, want a stored result", last)
	} else if run, err := store.Get(ctx, last.Run); err != nil || run.Report.Method.Executions != 3 {
		t.Errorf("a cell of 3 runs stored with method %+v (%v), want its 3 executions", run.Report.Method, err)
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

// TestBatchKeepsBrowserCells: a Run's browser cells, sent with its batch, join the run its
// server cells made, each named by the browser that measured it; sent first, they make the
// run the server's cells then join; a malformed batch stores nothing.
func TestBatchKeepsBrowserCells(t *testing.T) {
	ctx := context.Background()
	store, err := results.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ts := fakeServer(t, Options{Engines: []string{"native"}, Results: store}, instantRun)
	share := func(batch string) (int, int64) {
		m := goodShare()
		m["batch"] = batch
		status, body := postShare(t, ts.URL, mustJSON(m), nil)
		var a shareAnswer
		_ = json.Unmarshal([]byte(body), &a)
		return status, a.Run
	}
	serverCell := func(batch string) int64 {
		events := readEvents(t, postRun(t, ts.URL, `{"kernel":"fib_it","engine":"native","args":{"n":92},"runs":1,"batch":"`+batch+`"}`).Body)
		return events[len(events)-1].Run
	}
	for _, c := range []struct {
		batch       string
		serverFirst bool
	}{{"0123456789abcdef-server-first", true}, {"0123456789abcdef-browser-first", false}} {
		var server, browser int64
		var status int
		if c.serverFirst {
			server = serverCell(c.batch)
			status, browser = share(c.batch)
		} else {
			status, browser = share(c.batch)
			server = serverCell(c.batch)
		}
		if status != http.StatusCreated || server == 0 || server != browser {
			t.Fatalf("%s: share %d, runs %d (server) and %d (browser), want one run", c.batch, status, server, browser)
		}
		run, err := store.Get(ctx, server)
		if err != nil {
			t.Fatal(err)
		}
		engines := map[string]string{}
		for _, r := range run.Report.Results {
			engines[r.Engine] = r.Runtime
		}
		if len(run.Report.Results) != 3 || engines["browser-wasm"] != "Chrome 140" {
			t.Errorf("%s: run %d holds %v, want native and browser-wasm named Chrome 140", c.batch, server, engines)
		}
		if run.Report.Environment.Go == "" {
			t.Errorf("%s: run %d's environment %+v lacks the server's", c.batch, server, run.Report.Environment)
		}
	}
	if status, _ := share("short"); status != http.StatusBadRequest {
		t.Errorf("a malformed batch: %d, want 400", status)
	}
	if all, _ := store.List(ctx, results.Filter{}); len(all) != 2 {
		t.Errorf("%d runs stored, want 2", len(all))
	}
}
