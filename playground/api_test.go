package playground

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/runner"
)

// fakeServer is a server whose runs are made by run instead of worker processes.
func fakeServer(t *testing.T, opts Options, run runFunc) *httptest.Server {
	t.Helper()
	s := New(opts)
	if run != nil {
		s.run = run
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// instantRun returns the expected value at once, after reporting one progress event per run.
func instantRun(ctx context.Context, job runner.Job, opts runner.Options) (measure.Result, error) {
	for i := 1; i <= job.Options().Runs; i++ {
		if opts.OnProgress != nil {
			opts.OnProgress(runner.Progress{Phase: "run", Done: i, Total: job.Options().Runs})
		}
	}
	return measure.Result{Kernel: job.Kernel().Name, Args: job.Args(), Engine: job.Engine(), Runs: job.Options().Runs,
		Warmup: job.Options().Warmup, Value: 7540113804746346429, Expected: 7540113804746346429,
		Median: float64(time.Millisecond)}, nil
}

func postRun(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/api/run", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestRunValidation(t *testing.T) {
	ts := fakeServer(t, Options{Engines: []string{"native", "yaegi"}}, instantRun)
	tests := []struct {
		name, body, field, mentions string
	}{
		{"unknown kernel", `{"kernel":"fib","engine":"native"}`, "kernel", "valid kernels are fib_it, fib_rec"},
		{"missing kernel", `{"engine":"native"}`, "kernel", "kernel is missing"},
		{"unknown engine", `{"kernel":"fib_it","engine":"v8"}`, "engine", "server engines are native, yaegi"},
		{"browser engine", `{"kernel":"fib_it","engine":"browser-js"}`, "engine", "run in the page"},
		{"missing engine", `{"kernel":"fib_it"}`, "engine", "engine is missing"},
		{"arg above max", `{"kernel":"fib_rec","engine":"native","args":{"n":93}}`, "args.n", "allowed 0 to 92"},
		{"arg below min", `{"kernel":"ack","engine":"native","args":{"m":-1}}`, "args.m", "allowed 0 to 20"},
		{"arg not integer", `{"kernel":"fib_it","engine":"native","args":{"n":1.5}}`, "args.n", "must be an integer"},
		{"arg string", `{"kernel":"fib_it","engine":"native","args":{"n":"x"}}`, "args.n", "the value must be an integer"},
		{"unknown arg", `{"kernel":"fib_it","engine":"native","args":{"k":1}}`, "args.k", "its parameters are n"},
		{"runs zero", `{"kernel":"fib_it","engine":"native","runs":0}`, "runs", "allowed 1 to 100"},
		{"runs too many", `{"kernel":"fib_it","engine":"native","runs":101}`, "runs", "allowed 1 to 100"},
		{"runs string", `{"kernel":"fib_it","engine":"native","runs":"5"}`, "runs", "runs must be an integer"},
		{"warmup negative", `{"kernel":"fib_it","engine":"native","warmup":-1}`, "warmup", "allowed 0 (no warm-up) to 100"},
		{"min_sample_ms too large", `{"kernel":"fib_it","engine":"native","min_sample_ms":5000}`, "min_sample_ms", "allowed 0 (one call per sample) to 1s"},
		{"min_sample_ms negative", `{"kernel":"fib_it","engine":"native","min_sample_ms":-1}`, "min_sample_ms", "allowed 0 (one call per sample) to 1s"},
		{"warmup_ms too large", `{"kernel":"fib_it","engine":"native","warmup_ms":10001}`, "warmup_ms", "allowed 0 (the warm-up runs only) to 10s"},
		{"warmup_ms negative", `{"kernel":"fib_it","engine":"native","warmup_ms":-1}`, "warmup_ms", "allowed 0 (the warm-up runs only) to 10s"},
		{"warmup_ms string", `{"kernel":"fib_it","engine":"native","warmup_ms":"50"}`, "warmup_ms", "warmup_ms must be an integer"},
		{"unknown field", `{"kernel":"fib_it","engine":"native","repeat":3}`, "repeat", "unknown field"},
		{"not json", `fib_it`, "", "one JSON object"},
		{"two objects", `{"kernel":"fib_it","engine":"native"}{}`, "", "more than one JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := postRun(t, ts.URL, tt.body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want JSON", ct)
			}
			var e apiError
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if e.Field != tt.field {
				t.Errorf("field %q, want %q (error %q)", e.Field, tt.field, e.Error)
			}
			if !strings.Contains(e.Error, tt.mentions) {
				t.Errorf("error %q does not mention %q", e.Error, tt.mentions)
			}
		})
	}
}

// readEvents reads every NDJSON event of a run's answer.
func readEvents(t *testing.T, r io.Reader) []event {
	t.Helper()
	var events []event
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		events = append(events, e)
	}
	return events
}

func TestRunStreamsProgressThenResult(t *testing.T) {
	var got runner.Job
	ts := fakeServer(t, Options{Timeout: 7 * time.Second}, func(ctx context.Context, job runner.Job, opts runner.Options) (measure.Result, error) {
		got = job
		return instantRun(ctx, job, opts)
	})
	resp := postRun(t, ts.URL, `{"kernel":"fib_it","engine":"native","args":{"n":92},"runs":3,"warmup":2}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-ndjson") {
		t.Errorf("Content-Type %q", ct)
	}
	events := readEvents(t, resp.Body)
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	if want := "started progress progress progress result"; strings.Join(types, " ") != want {
		t.Fatalf("events %q, want %q", types, want)
	}
	if e := events[2]; e.Phase != "run" || e.Done == nil || *e.Done != 2 || e.Total == nil || *e.Total != 3 {
		t.Errorf("second progress event %+v", e)
	}
	last := events[len(events)-1]
	if last.Value != "7540113804746346429" || last.Expected != "7540113804746346429" {
		t.Errorf("value %q expected %q: int64 must travel as exact decimal strings", last.Value, last.Expected)
	}
	if last.Environment == nil || last.Environment.Cores < 1 || last.Environment.Go == "" {
		t.Errorf("environment %+v", last.Environment)
	}
	if got.Engine() != "native" || got.Kernel().Name != "fib_it" || got.Label() != "fib_it(92)" ||
		got.Options() != (measure.Options{Runs: 3, Warmup: 2}) || got.Timeout() != 7*time.Second {
		t.Errorf("job %s on %s, options %+v, timeout %v; want fib_it(92) on native, 3 runs after 2 warm-up, 7s",
			got.Label(), got.Engine(), got.Options(), got.Timeout())
	}
}

func TestRunDefaults(t *testing.T) {
	var got runner.Job
	ts := fakeServer(t, Options{}, func(ctx context.Context, job runner.Job, opts runner.Options) (measure.Result, error) {
		got = job
		return instantRun(ctx, job, opts)
	})
	resp := postRun(t, ts.URL, `{"kernel":"test1","engine":"native","args":{"small":10}}`)
	readEvents(t, resp.Body)
	if got.Options().Runs != int(runner.Bounds.Runs.Default) || got.Options().Warmup != int(runner.Bounds.Warmup.Default) {
		t.Errorf("options %+v, want runs %d warmup %d (runner.Bounds)", got.Options(), runner.Bounds.Runs.Default, runner.Bounds.Warmup.Default)
	}
	if args := got.Args(); len(args) != 2 || args[0] != 50_000 || args[1] != 10 {
		t.Errorf("args %v, want the default big and small = 10", args)
	}

	readEvents(t, postRun(t, ts.URL, `{"kernel":"fib_it","engine":"native","warmup":0}`).Body)
	if w := got.Options().WithDefaults().Warmup; w != 0 {
		t.Errorf("warmup 0 became %d warm-up runs, want none", w)
	}

	// warmup_ms is the warm-up's minimum time; 0 leaves the warmup calls alone.
	for body, want := range map[string]time.Duration{
		`{"kernel":"fib_it","engine":"native"}`:                  0, // measure.DefaultWarmupTime
		`{"kernel":"fib_it","engine":"native","warmup_ms":50}`:   50 * time.Millisecond,
		`{"kernel":"fib_it","engine":"native","warmup_ms":0}`:    -1,
		`{"kernel":"fib_it","engine":"native","warmup_ms":2500}`: 2500 * time.Millisecond,
	} {
		readEvents(t, postRun(t, ts.URL, body).Body)
		if w := got.Options().WarmupTime; w != want {
			t.Errorf("%s: WarmupTime %v, want %v", body, w, want)
		}
	}
}

func TestRunErrorAfterStartIsAnEvent(t *testing.T) {
	ts := fakeServer(t, Options{}, func(context.Context, runner.Job, runner.Options) (measure.Result, error) {
		return measure.Result{}, io.ErrUnexpectedEOF
	})
	events := readEvents(t, postRun(t, ts.URL, `{"kernel":"fib_it","engine":"native"}`).Body)
	if last := events[len(events)-1]; last.Type != "error" || !strings.Contains(last.Error, "unexpected EOF") {
		t.Errorf("last event %+v, want the run's error", last)
	}
}

// blockingRuns is a run function that holds every run until released, and records starts.
type blockingRuns struct {
	started   chan string
	release   chan struct{}
	cancelled chan string
}

func newBlockingRuns() *blockingRuns {
	return &blockingRuns{started: make(chan string, 10), release: make(chan struct{}), cancelled: make(chan string, 10)}
}

func (b *blockingRuns) run(ctx context.Context, job runner.Job, opts runner.Options) (measure.Result, error) {
	label := job.Kernel().Name
	b.started <- label
	select {
	case <-b.release:
		return instantRun(ctx, job, opts)
	case <-ctx.Done():
		b.cancelled <- label
		return measure.Result{}, ctx.Err()
	}
}

func receive(t *testing.T, c <-chan string, what string) string {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		return ""
	}
}

func TestQueueOneSlot(t *testing.T) {
	b := newBlockingRuns()
	ts := fakeServer(t, Options{MaxConcurrent: 1, MaxQueued: 1}, b.run)

	first := postRun(t, ts.URL, `{"kernel":"fib_it","engine":"native"}`)
	if got := receive(t, b.started, "the first run"); got != "fib_it" {
		t.Fatalf("started %q", got)
	}
	second := postRun(t, ts.URL, `{"kernel":"fib_rec","engine":"native","args":{"n":10}}`)
	sc := bufio.NewScanner(second.Body)
	if !sc.Scan() {
		t.Fatal("no event from the queued run")
	}
	var e event
	if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Type != "queued" || e.Position != 1 {
		t.Fatalf("first event of the second run %s, want queued at position 1", sc.Text())
	}
	select {
	case k := <-b.started:
		t.Fatalf("%s started while the only slot was taken", k)
	default:
	}

	third := postRun(t, ts.URL, `{"kernel":"ack","engine":"native"}`)
	if third.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("third run: status %d, want 503 with the queue full", third.StatusCode)
	}
	var full apiError
	_ = json.NewDecoder(third.Body).Decode(&full)
	if !strings.Contains(full.Error, "queue is full") {
		t.Errorf("503 error %q", full.Error)
	}

	close(b.release)
	readEvents(t, first.Body)
	if got := receive(t, b.started, "the queued run"); got != "fib_rec" {
		t.Fatalf("started %q, want fib_rec", got)
	}
	rest := readEvents(t, second.Body)
	if len(rest) == 0 || rest[0].Type != "started" || rest[len(rest)-1].Type != "result" {
		t.Errorf("queued run's events after its turn: %+v", rest)
	}
}

func TestDisconnectCancelsRun(t *testing.T) {
	b := newBlockingRuns()
	s := New(Options{MaxConcurrent: 1})
	s.run = b.run
	ts := httptest.NewServer(s)
	defer ts.Close()

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/api/run", strings.NewReader(`{"kernel":"fib_rec","engine":"native","args":{"n":60}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	receive(t, b.started, "the run")
	cancel()
	if got := receive(t, b.cancelled, "the run's cancellation"); got != "fib_rec" {
		t.Errorf("cancelled %q", got)
	}
	// The slot is free again.
	deadline := time.Now().Add(10 * time.Second)
	for {
		running, waiting := s.queue.stats()
		if running == 0 && waiting == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the disconnect: %d running, %d waiting", running, waiting)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestQueueGivesUpPlaceOnCancel(t *testing.T) {
	q := newQueue(1, 4)
	first, err := q.enter("a", measured)
	if err != nil {
		t.Fatal(err)
	}
	second, _ := q.enter("b", measured)
	third, _ := q.enter("c", measured)
	if p := third.position(); p != 2 {
		t.Fatalf("third's position %d, want 2", p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := second.wait(ctx, func(int) {}); err == nil {
		t.Fatal("wait with an ended context returned nil")
	}
	if p := third.position(); p != 1 {
		t.Fatalf("third's position %d after second left, want 1", p)
	}
	var mu sync.Mutex
	var positions []int
	done := make(chan error)
	go func() {
		done <- third.wait(context.Background(), func(p int) { mu.Lock(); positions = append(positions, p); mu.Unlock() })
	}()
	first.release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	third.release()
	if running, waiting := q.stats(); running != 0 || waiting != 0 {
		t.Errorf("%d running, %d waiting after every release", running, waiting)
	}
}

func TestKernelsAndExpected(t *testing.T) {
	ts := fakeServer(t, Options{Chat: http.NotFoundHandler()}, nil)
	resp, err := http.Get(ts.URL + "/api/kernels")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct {
		Kernels []struct {
			Name     string `json:"name"`
			HostCall bool   `json:"host_call"`
			Params   []struct {
				Name     string `json:"name"`
				Default  int    `json:"default"`
				Min, Max int
			} `json:"params"`
		} `json:"kernels"`
		Engines    []string `json:"engines"`
		EngineInfo []struct {
			Name        string `json:"name"`
			KernelsWasm bool   `json:"kernels_wasm"`
			Group       string `json:"group"`
		} `json:"engine_info"`
		Panels      map[string]bool `json:"panels"`
		MinSampleMS limit           `json:"min_sample_ms"`
		WarmupMS    limit           `json:"warmup_ms"`
		Runs        limit           `json:"runs"`
		Study       limit           `json:"study_executions"`
		Calls       limit           `json:"calls"`
		BudgetMS    limit           `json:"budget_ms"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	// The page's bound on timed runs is the CLI's.
	if c.Runs != (limit{int(runner.Bounds.Runs.Default), 1, runner.MaxJobRuns}) {
		t.Errorf("runs bounds %+v, want default %d, 1 to %d as wasmgap bench", c.Runs, runner.Bounds.Runs.Default, runner.MaxJobRuns)
	}
	if maxMS := int(runner.MaxMinSample / time.Millisecond); c.MinSampleMS != (limit{10, 0, maxMS}) {
		t.Errorf("min_sample_ms bounds %+v, want default 10, 0 to %d", c.MinSampleMS, maxMS)
	}
	// The warm-up's minimum is the CLI's --warmup-time: its default and its bound.
	if c.WarmupMS != (limit{int(measure.DefaultWarmupTime / time.Millisecond), 0, int(runner.MaxWarmupTime / time.Millisecond)}) {
		t.Errorf("warmup_ms bounds %+v, want default %v, 0 to %v", c.WarmupMS, measure.DefaultWarmupTime, runner.MaxWarmupTime)
	}
	// A warm-up study's limits are the table's (its budget narrowed to this server's), which
	// the page's Warm-up view reads.
	b := runner.Bounds
	if c.Study != (limit{int(b.WarmupExecutions.Default), int(b.WarmupExecutions.Min), int(b.WarmupExecutions.Max)}) ||
		c.Calls != (limit{int(b.Calls.Default), int(b.Calls.Min), int(b.Calls.Max)}) ||
		c.BudgetMS != (limit{int(maxWarmupBudget / time.Millisecond), 1, int(maxWarmupBudget / time.Millisecond)}) {
		t.Errorf("a study's bounds: executions %+v, calls %+v, budget_ms %+v; want runner.Bounds' %+v, %+v, %+v", c.Study, c.Calls, c.BudgetMS, b.WarmupExecutions, b.Calls, b.Budget)
	}
	if len(c.Kernels) < 4 || c.Kernels[0].Name != "fib_it" || c.Kernels[0].Params[0].Max != 92 {
		t.Errorf("kernels %+v", c.Kernels)
	}
	// The page runs host_call (last, marked) on the engines the server says run kernels.wasm,
	// its own browser-wasm among them, and shows the others' cells as n/a.
	if last := c.Kernels[len(c.Kernels)-1]; last.Name != "host_call" || !last.HostCall || c.Kernels[0].HostCall {
		t.Errorf("kernels %+v, want host_call last and marked host_call alone", c.Kernels)
	}
	wasmEngines := map[string]bool{}
	browsers := 0
	for _, e := range c.EngineInfo {
		wasmEngines[e.Name] = e.KernelsWasm
		// The headless browsers on the server are a group of their own, not "Other languages".
		if strings.HasPrefix(e.Name, "chromium-") || strings.HasPrefix(e.Name, "firefox-") {
			browsers++
			if e.Group != engine.GroupBrowsers {
				t.Errorf("%s in the group %q, want %q", e.Name, e.Group, engine.GroupBrowsers)
			}
		}
	}
	if browsers != 4 {
		t.Errorf("%d headless browser engines in engine_info, want chromium's and firefox's wasm and js", browsers)
	}
	if !wasmEngines["browser-wasm"] || !wasmEngines["wazero-compiler"] || wasmEngines["browser-js"] || wasmEngines["native"] {
		t.Errorf("kernels_wasm by engine %v, want browser-wasm and wazero-compiler only of those", wasmEngines)
	}
	// With no engines given the server offers the registry's, in its order,
	// the Go tiers first.
	if !slices.Equal(c.Engines, engine.Names()) || len(c.Engines) < 5 || strings.Join(c.Engines[:5], ",") != "native,wazero-compiler,wazero-compiler-opt,wazero-interpreter,yaegi" {
		t.Errorf("engines %v, want the registry's %v, the Go tiers first", c.Engines, engine.Names())
	}
	if !c.Panels["chat"] || c.Panels["load"] {
		t.Errorf("panels %v, want chat only", c.Panels)
	}

	tests := []struct {
		query  string
		status int
		want   string
	}{
		{"kernel=fib_it&n=92", 200, `"expected":"7540113804746346429"`},
		{"kernel=fib_rec", 200, `"label":"fib_rec(40)"`},
		{"kernel=ack&n=3&m=10", 200, `"expected":"8189"`},
		{"kernel=fib_it&n=93", 400, `"field":"args.n"`},
		{"kernel=nope", 400, `"field":"kernel"`},
	}
	for _, tt := range tests {
		resp, err := http.Get(ts.URL + "/api/expected?" + tt.query)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.want) {
			t.Errorf("%s: %d %s, want %d with %s", tt.query, resp.StatusCode, body, tt.status, tt.want)
		}
	}
}

func TestPanelsMounted(t *testing.T) {
	chat := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "chat saw "+r.URL.Path) })
	ts := fakeServer(t, Options{Chat: chat}, nil)
	resp, err := http.Get(ts.URL + "/chat/events")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "chat saw /events" {
		t.Errorf("chat answered %q", body)
	}
	if resp.Header.Get("Cross-Origin-Embedder-Policy") != "require-corp" {
		t.Error("the chat panel's answer lacks COEP: it could not load in the isolated page")
	}
	resp, _ = http.Get(ts.URL + "/load/")
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/load/ without a load handler: %d, want 404", resp.StatusCode)
	}
}

// testDist is a built bundle in miniature.
func testDist() fstest.MapFS {
	js := bytes.Repeat([]byte("console.log('wasmgap');\n"), 100)
	return fstest.MapFS{
		"manifest.json":       {Data: []byte(`{"files":{"main.js":"main-ABC123.js","kernels.wasm":"kernels-XYZ.wasm"}}`)},
		"index.html":          {Data: []byte(`<!doctype html><script type="module" src="/main-ABC123.js"></script>` + strings.Repeat(" ", 600))},
		"main-ABC123.js":      {Data: js},
		"main-ABC123.js.map":  {Data: []byte(`{"version":3}`)},
		"kernels-XYZ.wasm":    {Data: append([]byte("\x00asm\x01\x00\x00\x00"), make([]byte, 4096)...)},
		"unlisted-ABC123.txt": {Data: []byte("x")},
	}
}

func TestStaticHeaders(t *testing.T) {
	dist := testDist()
	ts := fakeServer(t, Options{Dist: dist}, nil)
	tests := []struct {
		path, acceptEncoding string
		status               int
		cache, ctype, enc    string
	}{
		{"/", "gzip", 200, "no-cache", "text/html", "gzip"},
		{"/main-ABC123.js", "gzip, deflate", 200, "public, max-age=31536000, immutable", "text/javascript", "gzip"},
		{"/main-ABC123.js", "identity", 200, "public, max-age=31536000, immutable", "text/javascript", ""},
		{"/main-ABC123.js", "gzip;q=0", 200, "public, max-age=31536000, immutable", "text/javascript", ""},
		{"/main-ABC123.js.map", "gzip", 200, "public, max-age=31536000, immutable", "application/json", ""},
		{"/kernels-XYZ.wasm", "gzip", 200, "public, max-age=31536000, immutable", "application/wasm", "gzip"},
		{"/manifest.json", "", 404, "", "", ""},
		{"/missing.js", "", 404, "", "", ""},
		{"/api/kernels", "", 200, "no-store", "application/json", ""},
	}
	tr := &http.Transport{DisableCompression: true}
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.acceptEncoding, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, ts.URL+tt.path, nil)
			if tt.acceptEncoding != "" {
				req.Header.Set("Accept-Encoding", tt.acceptEncoding)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			h := resp.Header
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if h.Get("Cross-Origin-Opener-Policy") != "same-origin" || h.Get("Cross-Origin-Embedder-Policy") != "require-corp" {
				t.Errorf("COOP %q COEP %q", h.Get("Cross-Origin-Opener-Policy"), h.Get("Cross-Origin-Embedder-Policy"))
			}
			if tt.status != 200 {
				return
			}
			if h.Get("Cache-Control") != tt.cache {
				t.Errorf("Cache-Control %q, want %q", h.Get("Cache-Control"), tt.cache)
			}
			if !strings.HasPrefix(h.Get("Content-Type"), tt.ctype) {
				t.Errorf("Content-Type %q, want %q", h.Get("Content-Type"), tt.ctype)
			}
			if h.Get("Content-Encoding") != tt.enc {
				t.Errorf("Content-Encoding %q, want %q", h.Get("Content-Encoding"), tt.enc)
			}
			if tt.enc == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				plain, err := io.ReadAll(zr)
				if err != nil {
					t.Fatal(err)
				}
				name := strings.TrimPrefix(tt.path, "/")
				if name == "" {
					name = "index.html"
				}
				if !bytes.Equal(plain, dist[name].Data) {
					t.Error("gunzipped body differs from the file")
				}
				if len(body) >= len(plain) {
					t.Errorf("gzip body %d bytes, plain %d", len(body), len(plain))
				}
			}
		})
	}

	// A second request with the ETag is answered 304.
	resp, _ := http.Get(ts.URL + "/main-ABC123.js")
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/main-ABC123.js", nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: status %d, want 304", resp.StatusCode)
	}
}

func TestNotBuiltPage(t *testing.T) {
	ts := fakeServer(t, Options{Dist: fstest.MapFS{"placeholder": {Data: []byte("x")}}}, nil)
	resp, err := http.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "go tool task build") {
		t.Errorf("status %d, body %q: want the page that says how to build", resp.StatusCode, body)
	}
	resp, _ = http.Get(ts.URL + "/api/kernels")
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/api/kernels without a bundle: %d", resp.StatusCode)
	}
}

func TestUnknownAPIRoute(t *testing.T) {
	ts := fakeServer(t, Options{}, nil)
	resp, err := http.Get(ts.URL + "/api/run")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /api/run: %d", resp.StatusCode)
	}
}

func TestRunNativeInWorker(t *testing.T) {
	ts := fakeServer(t, Options{Engines: []string{"native"}, Timeout: 20 * time.Second}, nil)
	resp := postRun(t, ts.URL, `{"kernel":"fib_rec","engine":"native","args":{"n":20},"runs":3,"warmup":0}`)
	events := readEvents(t, resp.Body)
	progress := 0
	for _, e := range events {
		if e.Type == "progress" {
			progress++
		}
	}
	last := events[len(events)-1]
	if last.Type != "result" || last.Result == nil {
		t.Fatalf("last event %+v, want the result", last)
	}
	r := last.Result
	if r.Failure != "" || last.Value != "6765" || last.Expected != "6765" || len(r.Samples) != 3 || r.Median <= 0 || r.Warmup != 0 {
		t.Errorf("result %+v (value %s), want fib_rec(20) = 6765 from 3 timed runs and no warm-up", r, last.Value)
	}
	if progress == 0 {
		t.Error("no progress events from the worker")
	}
}

func TestHistory(t *testing.T) {
	ts := fakeServer(t, Options{}, nil)
	resp, err := http.Get(ts.URL + "/api/history")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var figures []struct {
		Kernel  string  `json:"kernel"`
		Label   string  `json:"label"`
		Seconds float64 `json:"seconds"`
		Failure string  `json:"failure"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&figures); err != nil {
		t.Fatal(err)
	}
	var fibRecPHP7, hhvmAck bool
	for _, f := range figures {
		if f.Kernel == "fib_rec" && f.Label == "PHP 7.0.0" && f.Seconds > 19 && f.Seconds < 20 {
			fibRecPHP7 = true
		}
		if f.Kernel == "ack_while" && f.Failure != "" {
			hhvmAck = true
		}
	}
	if !fibRecPHP7 || !hhvmAck {
		t.Errorf("history lacks PHP 7's fib_rec(40) (19.47 s) or a failed ack_while: %d figures", len(figures))
	}
}
