package playground

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/results"
)

// shareRefused posts body to a fresh server (a rate limit of its own) and checks that it
// is refused with status, an answer that holds want, and nothing stored.
func shareRefused(t *testing.T, name string, body []byte, status int, want ...string) {
	t.Helper()
	ts, store := resultsServer(t, Options{})
	got, answer := postShare(t, ts.URL, body, nil)
	if got != status {
		t.Errorf("%s: %d %s, want %d", name, got, answer, status)
	}
	for _, w := range want {
		if !strings.Contains(answer, w) {
			t.Errorf("%s: %s, want it to say %q", name, answer, w)
		}
	}
	if list, err := store.List(context.Background(), results.Filter{}); err != nil || len(list) != 0 {
		t.Errorf("%s: %d runs stored (%v), want none", name, len(list), err)
	}
}

// A submission counts as one run: a cell (kernel, arguments, engine) shared twice is
// refused, naming it, as the 64 copies of one cell were.
func TestShareDuplicateCell(t *testing.T) {
	m := goodShare()
	cells := m["cells"].([]any)
	for range 62 {
		cells = append(cells, cells[0])
	}
	m["cells"] = cells
	shareRefused(t, "one cell 63 times", mustJSON(m), 400, "cell 3 is fib_it(30) on browser-wasm again (as cell 1)", `"field":"cells[2]"`)
}

// A sample whose calls together lasted less than the clock's resolution (1 ns, and half
// the browser's timer step) is refused, as are values that are no time.
func TestShareSampleResolution(t *testing.T) {
	for _, c := range []struct {
		name    string
		samples string
		calls   int
		step    float64
		want    string
	}{
		{"1e-9 ns once", `[1e-9]`, 1, 0, "below the clock's resolution of 1 ns"},
		{"1e-9 ns over a million calls", `[1e-9]`, 1_000_000, 0, "lasted 0.001 ns"},
		{"under half a 5 µs step", `[10]`, 100, 5000, "below the clock's resolution of 2500 ns"},
		{"zero", `[0]`, 1, 0, "out of range: allowed above 0"},
		{"negative", `[-5]`, 100, 0, "out of range"},
		{"past float64", `[1e999]`, 1, 0, "samples_ns"},
	} {
		m := goodShare()
		m["browser"].(map[string]any)["timer_resolution_ns"] = c.step
		cell := m["cells"].([]any)[0].(map[string]any)
		cell["calls"] = c.calls
		cell["samples_ns"] = "SAMPLES"
		body := strings.Replace(string(mustJSON(m)), `"SAMPLES"`, c.samples, 1)
		shareRefused(t, c.name, []byte(body), 400, c.want)
	}
	// At the resolution, a sample is a time: 3 ns per call over 1,000 calls is 3 µs, past
	// half a 5 µs step.
	ts, _ := resultsServer(t, Options{})
	m := goodShare()
	cell := m["cells"].([]any)[0].(map[string]any)
	cell["calls"], cell["samples_ns"] = 1000, []float64{3, 3, 3}
	if status, answer := postShare(t, ts.URL, mustJSON(m), nil); status != 201 {
		t.Errorf("3 ns per call over 1,000 calls: %d %s, want 201", status, answer)
	}
}

// The body is one JSON object: anything after it is refused, and nothing stored.
func TestShareOneJSONValue(t *testing.T) {
	good := string(mustJSON(goodShare()))
	for name, body := range map[string]string{
		"two objects":      good + good,
		"two, on lines":    good + "\n" + good + "\n",
		"a stray brace":    good + "}",
		"a number after":   good + " 1",
		"an array of them": "[" + good + "," + good + "]",
	} {
		shareRefused(t, name, []byte(body), 400, "one JSON object")
	}
	ts, _ := resultsServer(t, Options{})
	if status, answer := postShare(t, ts.URL, []byte(good+"\n"), nil); status != 201 {
		t.Errorf("one object and a newline: %d %s, want 201", status, answer)
	}
}

// Past the store's byte limit a submission gets 507 saying so, and nothing is stored;
// the runs stored before stay.
func TestShareStoreFull(t *testing.T) {
	ts, store := resultsServer(t, Options{})
	if status, answer := postShare(t, ts.URL, mustJSON(goodShare()), nil); status != 201 {
		t.Fatalf("the first submission: %d %s", status, answer)
	}
	n, err := store.Bytes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	store.SetMaxBytes(n + 1)
	status, answer := postShare(t, ts.URL, mustJSON(goodShare()), nil)
	if status != 507 || !strings.Contains(answer, "results store is full") || !strings.Contains(answer, "nothing of this submission was stored") {
		t.Errorf("past the limit: %d %s, want 507 saying the store is full", status, answer)
	}
	if list, err := store.List(context.Background(), results.Filter{}); err != nil || len(list) != 1 {
		t.Errorf("%d runs stored (%v), want the first only", len(list), err)
	}
}

// FuzzShareBody posts any body to the share route (past its rate limit): every answer is
// 201 with a run of cells that are each shared once, or a 400 or 413 whose JSON error
// says what was wrong; nothing panics, nothing else comes back.
//
//	go test -run '^$' -fuzz '^FuzzShareBody$' -fuzztime 10s ./playground
func FuzzShareBody(f *testing.F) {
	good := string(mustJSON(goodShare()))
	dup := goodShare()
	dup["cells"] = append(dup["cells"].([]any), dup["cells"].([]any)[0])
	for _, seed := range []string{
		good, good + good, good + "}", string(mustJSON(dup)),
		strings.Replace(good, `"samples_ns":[110,100,105]`, `"samples_ns":[1e-9]`, 1),
		strings.Replace(good, `"calls":100`, `"calls":1e999`, 1),
		`{"cells":[]}`, `[]`, `null`, `{`, "\xff\xfe",
	} {
		f.Add(seed)
	}
	store, err := results.Open(context.Background(), filepath.Join(f.TempDir(), "results.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { store.Close() })
	s := New(Options{Results: store})
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/api/results/share", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.handleShare(rec, req)
		switch rec.Code {
		case http.StatusCreated:
			var ans shareAnswer
			if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
				t.Fatalf("201 for %q: %q", body, rec.Body)
			}
			run, err := store.Get(context.Background(), ans.Run)
			if err != nil || results.CheckCells(run.Report.Results) != nil {
				t.Fatalf("201 for %q stored %+v (%v)", body, run.Report.Results, err)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			var e apiError
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("%d for %q has no error message: %q", rec.Code, body, rec.Body)
			}
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body)
		}
	})
}
