package playground

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/explain"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/kernels"
)

func TestExplainAPIErrors(t *testing.T) {
	ts := fakeServer(t, Options{Engines: []string{"native"}}, nil)
	for _, tt := range []struct{ query, field, says string }{
		{"kernel=nope&engine=source", "kernel", ""},
		{"kernel=fib_rec&engine=nope", "engine", ""},
		{"kernel=fib_rec&engine=java", "engine", "not offered by this server: it offers native"},
		{"kernel=fib_rec&engine=wasmtime", "engine", "Cranelift"},
		{"kernel=fib_rec&engine=source&n=x", "args.n", ""},
		{"kernel=fib_rec&engine=source&n=200", "args.n", ""},
		{"kernel=fib_rec&engine=source&m=2", "args.m", ""},
		{"kernel=fib_rec&engine=source&profile=maybe", "profile", ""},
		{"kernel=fib_rec&kernel=fib_it&engine=source", "kernel", "give each parameter once"},
		{"kernel=fib_rec&engine=source&profile=1&profile=0", "profile", "give each parameter once"},
	} {
		resp, err := http.Get(ts.URL + "/api/explain?" + tt.query)
		if err != nil {
			t.Fatal(err)
		}
		var e apiError
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || e.Field != tt.field || !strings.Contains(e.Error, tt.says) {
			t.Errorf("%s: %d %+v, want 400 naming %s, saying %q", tt.query, resp.StatusCode, e, tt.field, tt.says)
		}
	}
}

// TestExplainAPIInAWorker explains the Go source in a worker process (this test binary,
// through TestMain) and answers the second request from the cache.
func TestExplainAPIInAWorker(t *testing.T) {
	ts := fakeServer(t, Options{}, nil)
	for i, want := range []string{"miss", "hit"} {
		resp, err := http.Get(ts.URL + "/api/explain?kernel=fib_rec&engine=source&n=20")
		if err != nil {
			t.Fatal(err)
		}
		var rep explain.Report
		err = json.NewDecoder(resp.Body).Decode(&rep)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %d, %v", i, resp.StatusCode, err)
		}
		if got := resp.Header.Get("X-Explain-Cache"); got != want {
			t.Errorf("request %d: cache %q, want %q", i, got, want)
		}
		if rep.Label != "fib_rec(20)" || len(rep.Engines) != 1 || len(rep.Engines[0].Listings) != 1 || rep.Engines[0].Listings[0].RecursiveCalls != 1 {
			t.Errorf("request %d: %+v", i, rep)
		}
		if len(rep.Summary) != 1 || !strings.Contains(rep.Summary[0].Words, "calls itself at 1 place") {
			t.Errorf("request %d: summary %+v, want the source's line in words (explain.Summarize)", i, rep.Summary)
		}
	}
}

// TestCatalogueNamesTheJITsExplainWaitsFor: the Code view's waiting words come from
// explain.JITs, served in the catalogue: V8's tiers among them, wazero's compiler (ahead
// of time) and gc not.
func TestCatalogueNamesTheJITsExplainWaitsFor(t *testing.T) {
	ts := fakeServer(t, Options{}, nil)
	resp, err := http.Get(ts.URL + "/api/kernels")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var cat struct {
		JITs []string `json:"explain_jits"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&cat); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cat.JITs, "node-wasm") || slices.Contains(cat.JITs, "wazero-compiler") || slices.Contains(cat.JITs, "native") {
		t.Errorf("explain_jits %v: want node-wasm, not wazero-compiler nor native", cat.JITs)
	}
}

// explainServer is a server whose explanations explain makes.
func explainServer(t *testing.T, opts Options, run runFunc, explain explainFunc) (*Server, *httptest.Server) {
	t.Helper()
	s := New(opts)
	if run != nil {
		s.run = run
	}
	s.explain = explain
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

func getExplain(t *testing.T, url, query string) (int, string) {
	t.Helper()
	resp, err := http.Get(url + "/api/explain?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// waitFor polls cond until it holds (the test's own deadline bounds it).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if t.Context().Err() != nil {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestExplainWaitsBehindARun: with one slot, a run in flight holds it and an explanation
// waits in the run queue until the run is done.
func TestExplainWaitsBehindARun(t *testing.T) {
	release := make(chan struct{})
	run := func(ctx context.Context, job runner.Job, opts runner.Options) (measure.Result, error) {
		<-release
		return instantRun(ctx, job, opts)
	}
	var explained atomic.Int32
	fake := func(ctx context.Context, k *kernels.Kernel, args []int, eng string, _ explain.Options, _ time.Duration) (*explain.Report, error) {
		explained.Add(1)
		return &explain.Report{Kernel: k.Name, Engines: []explain.Explanation{{Engine: eng}}}, nil
	}
	s, ts := explainServer(t, Options{MaxConcurrent: 1}, run, fake)
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		resp, err := http.Post(ts.URL+"/api/run", "application/json", strings.NewReader(`{"kernel":"fib_it","engine":"native"}`))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	waitFor(t, "the run holds the slot", func() bool { s.queue.mu.Lock(); defer s.queue.mu.Unlock(); return s.queue.running == 1 })
	type answer struct {
		code int
		body string
	}
	got := make(chan answer, 1)
	go func() {
		code, body := getExplain(t, ts.URL, "kernel=fib_it&engine=native")
		got <- answer{code, body}
	}()
	waitFor(t, "the explanation waits in the queue", func() bool { s.queue.mu.Lock(); defer s.queue.mu.Unlock(); return len(s.queue.waiting) == 1 })
	if n := explained.Load(); n != 0 {
		t.Fatalf("%d explanations made while the run holds the only slot", n)
	}
	close(release)
	a := <-got
	<-runDone
	if a.code != http.StatusOK || explained.Load() != 1 {
		t.Errorf("after the run: %d %s, %d explanations; want 200 and 1", a.code, a.body, explained.Load())
	}
}

// TestExplainRefusalsKeptForAWhile: a refusal (a time limit) is answered from the cache
// until explainRetry has passed, an error of the request is not kept, and no answer shows
// a path of the server's files.
func TestExplainRefusalsKeptForAWhile(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	fake := func(ctx context.Context, k *kernels.Kernel, args []int, eng string, _ explain.Options, _ time.Duration) (*explain.Report, error) {
		switch calls.Add(1) {
		case 1:
			return nil, errors.New("failed in " + exe)
		default:
			return &explain.Report{Kernel: k.Name, Engines: []explain.Explanation{{Engine: eng, Refused: "timed out after 30s reading " + exe}}}, nil
		}
	}
	s, ts := explainServer(t, Options{}, nil, fake)
	dir := filepath.Dir(exe)
	code, body := getExplain(t, ts.URL, "kernel=fib_it&engine=native")
	if code != http.StatusInternalServerError || strings.Contains(body, dir) {
		t.Errorf("an error: %d %s, want 500 without %s", code, body, dir)
	}
	for i := range 2 {
		code, body = getExplain(t, ts.URL, "kernel=fib_it&engine=native")
		if code != http.StatusOK || !strings.Contains(body, "timed out") || strings.Contains(body, dir) || !strings.Contains(body, "<bin>/") {
			t.Errorf("request %d: %d %s, want the refusal without %s", i, code, body, dir)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d explanations made, want 2: the error retried, the refusal kept", n)
	}
	// Past explainRetry, the refusal is tried again.
	s.explains.mu.Lock()
	for _, e := range s.explains.entries {
		e.at = e.at.Add(-explainRetry - time.Second)
	}
	s.explains.mu.Unlock()
	getExplain(t, ts.URL, "kernel=fib_it&engine=native")
	if n := calls.Load(); n != 3 {
		t.Errorf("%d explanations made, want 3: a refusal past explainRetry tried again", n)
	}
}
