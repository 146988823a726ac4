package playground

import (
	"bufio"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/warmup"
)

func postWarmup(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/api/warmup", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestWarmupRefuses(t *testing.T) {
	ts := fakeServer(t, Options{Engines: []string{"native", "yaegi"}}, nil)
	tests := []struct{ body, field, want string }{
		{`{"engines":["java"]}`, "engines", "not offered by this server"},
		{`{"engines":["native"],"executions":50}`, "executions", "out of range"},
		{`{"engines":["native"],"calls":2}`, "calls", "out of range"},
		{`{"engines":["native"],"budget_ms":60000}`, "budget_ms", "out of range"},
		{`{"engines":["native","yaegi"],"executions":20,"budget_ms":10000}`, "budget_ms", "this server allows"},
		{`{"engines":["native"],"kernel":"nope"}`, "kernel", "nope"},
		{`{"engines":["native"],"args":{"n":500}}`, "args.n", "out of range"},
		{`{"series":[]}`, "series", "allowed 1 to"},
		{`{"series":[{"engine":"x","runs":[]}]}`, "series[0].runs", "needs an engine"},
	}
	for _, tt := range tests {
		resp := postWarmup(t, ts.URL, tt.body)
		var e apiError
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusBadRequest || e.Field != tt.field || !strings.Contains(e.Error, tt.want) {
			t.Errorf("%s: %d %+v, want 400 on %q saying %q", tt.body, resp.StatusCode, e, tt.field, tt.want)
		}
	}
	resp := postWarmup(t, ts.URL, `{"nope":1}`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an unknown field: status %d, want 400", resp.StatusCode)
	}
}

// A study streams its progress, execution by execution, then the analysed report.
func TestWarmupStreamsAStudy(t *testing.T) {
	ts := fakeServer(t, Options{Engines: []string{"native", "yaegi"}}, nil)
	resp := postWarmup(t, ts.URL, `{"engines":["native"],"kernel":"fib_it","args":{"n":20},"executions":2,"calls":30}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var types []string
	var rep *warmup.Report
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e warmupEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		types = append(types, e.Type)
		if e.Type == "error" {
			t.Fatal(e.Error)
		}
		if e.Result != nil {
			rep = e.Result
		}
	}
	if got := strings.Join(types, ","); got != "started,progress,progress,result" {
		t.Errorf("events %s, want started, progress twice, result", got)
	}
	if rep == nil || len(rep.Engines) != 1 || len(rep.Engines[0].Runs) != 2 || len(rep.Engines[0].Runs[0].Times) != 30 || rep.Engines[0].Runs[0].Analysis == nil {
		t.Fatalf("report %+v: want native with 2 runs of 30 samples, analysed", rep)
	}
}

// Series the page timed are analysed as the CLI's are: a step down is a warm-up.
func TestWarmupAnalysesSeries(t *testing.T) {
	ts := fakeServer(t, Options{}, nil)
	times := make([]float64, 400)
	for i := range times {
		times[i] = 100 + float64(i%7)
		if i < 100 {
			times[i] = 900 + float64(i%5)
		}
	}
	body, _ := json.Marshal(map[string]any{"kernel": "fib_rec", "series": []map[string]any{{"engine": "chromium-js", "runs": []map[string]any{{"times_ns": times, "group": 1}}}}})
	resp := postWarmup(t, ts.URL, string(body))
	var rep warmup.Report
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	a := rep.Engines[0].Runs[0].Analysis
	if resp.StatusCode != http.StatusOK || a == nil || a.Class != warmup.Warmup || a.SteadyStart != 100 {
		t.Fatalf("status %d, analysis %+v: want a warm-up, steady from sample 100", resp.StatusCode, a)
	}
}

// seriesBody is an analysis-only request of one engine's one run of 400 samples, after
// change has had its way with the run and the engine.
func seriesBody(change func(run map[string]any, engine map[string]any)) string {
	times := make([]any, 400)
	for i := range times {
		times[i] = 100.0 + float64(i%7)
	}
	run := map[string]any{"times_ns": times, "group": 1, "timer": "performance.now"}
	eng := map[string]any{"engine": "chromium-js", "runs": []any{run}}
	change(run, eng)
	body, _ := json.Marshal(map[string]any{"kernel": "fib_rec", "series": []any{eng}})
	return string(body)
}

// Series are checked as the share route checks a browser's samples, and a refusal names
// the field: no time that is not a finite number of ns above zero and at most an hour,
// no group out of range, no name, timer or series out of bounds.
func TestWarmupRefusesSeries(t *testing.T) {
	ts := fakeServer(t, Options{}, nil)
	sample := func(v float64) func(run, _ map[string]any) {
		return func(run, _ map[string]any) { run["times_ns"].([]any)[3] = v }
	}
	group := func(g int64) func(run, _ map[string]any) {
		return func(run, _ map[string]any) { run["group"] = g }
	}
	const times = "series[0].runs[0].times_ns"
	tests := []struct {
		name, field, want string
		change            func(run, engine map[string]any)
	}{
		{"1e308", times, "out of range", sample(1e308)},
		{"an hour and more", times, "out of range", sample(3.7e12)},
		{"1e-308", times, "below the clock's resolution", sample(1e-308)},
		{"zero", times, "out of range", sample(0)},
		{"negative", times, "out of range", sample(-5)},
		{"empty", times, "allowed 10 to 10000", func(run, _ map[string]any) { run["times_ns"] = []any{} }},
		{"too long", times, "allowed 10 to 10000", func(run, _ map[string]any) { run["times_ns"] = make([]float64, 10_001) }},
		{"group 0", "series[0].runs[0].group", "out of range", group(0)},
		{"group -5", "series[0].runs[0].group", "out of range", group(-5)},
		{"group 2^62", "series[0].runs[0].group", "out of range", group(1 << 62)},
		{"a 100 KB timer", "series[0].runs[0].timer", "at most 64", func(run, _ map[string]any) { run["timer"] = strings.Repeat("x", 100<<10) }},
		{"a long engine", "series[0].engine", "at most 64", func(_, e map[string]any) { e["engine"] = strings.Repeat("e", 5000) }},
		{"no engine", "series[0].engine", "missing", func(_, e map[string]any) { e["engine"] = "" }},
		{"too many samples", "series", "more than 40000", func(run, e map[string]any) {
			big := make([]float64, 10_000)
			for i := range big {
				big[i] = 100
			}
			var runs []any
			for range 5 {
				runs = append(runs, map[string]any{"times_ns": big, "group": 1})
			}
			e["runs"] = runs
		}},
	}
	for _, tt := range tests {
		resp := postWarmup(t, ts.URL, seriesBody(tt.change))
		var e apiError
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
			t.Fatalf("%s: status %d, body not JSON: %v", tt.name, resp.StatusCode, err)
		}
		if resp.StatusCode != http.StatusBadRequest || e.Field != tt.field || !strings.Contains(e.Error, tt.want) {
			t.Errorf("%s: %d %+v, want 400 on %q saying %q", tt.name, resp.StatusCode, e, tt.field, tt.want)
		}
	}
	long := strings.Repeat("k", 5000)
	resp := postWarmup(t, ts.URL, strings.Replace(seriesBody(func(_, _ map[string]any) {}), `"fib_rec"`, `"`+long+`"`, 1))
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a 5,000-character kernel: status %d, want 400", resp.StatusCode)
	}
	if resp := postWarmup(t, ts.URL, seriesBody(func(_, _ map[string]any) {})); resp.StatusCode != http.StatusOK {
		t.Errorf("a good series: status %d, want 200", resp.StatusCode)
	}
}

// An answer JSON cannot hold is a 500 with a body, never a status without one.
func TestWriteJSONNeverWritesAStatusWithoutABody(t *testing.T) {
	rec := httptest.NewRecorder()
	writeJSON(rec, http.StatusOK, map[string]float64{"x": math.Inf(1)})
	var e apiError
	if err := json.NewDecoder(rec.Body).Decode(&e); err != nil || rec.Code != http.StatusInternalServerError || !strings.Contains(e.Error, "could not be encoded") {
		t.Errorf("%d %+v (%v), want 500 saying the answer could not be encoded", rec.Code, e, err)
	}
}

// A study with every field left out fits the server's budget: its default budget is
// shared between the default engines' executions.
func TestWarmupDefaultsFit(t *testing.T) {
	s := New(Options{})
	plan, aerr := s.warmupPlan(warmupRequest{})
	if aerr != nil {
		t.Fatalf("POST /api/warmup {}: %+v", *aerr)
	}
	if total := time.Duration(len(plan.Engines)*plan.Executions) * plan.Collection.Budget; total > maxWarmupTotal || plan.Collection.Budget <= 0 {
		t.Errorf("%d engines × %d executions × %v = %v, want above 0 and at most %v", len(plan.Engines), plan.Executions, plan.Collection.Budget, total, maxWarmupTotal)
	}
	if plan.Timeout < plan.Collection.Budget {
		t.Errorf("the execution's time limit %v is below its budget %v", plan.Timeout, plan.Collection.Budget)
	}
}

// An analysis takes a place in the run queue: an address that holds its share is
// answered 503 with Retry-After.
func TestWarmupSeriesTakeAPlace(t *testing.T) {
	s := New(Options{MaxConcurrent: 1, MaxQueued: 4})
	ts := peerServer(t, s)
	for range 2 { // one running, one waiting: the share of an address
		if _, err := s.queue.enter("192.0.2.1", measured); err != nil {
			t.Fatal(err)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/warmup", strings.NewReader(seriesBody(func(_, _ map[string]any) {})))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Test-Peer", "192.0.2.1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e apiError
	_ = json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(e.Error, "this address has 1 runs running and 1 waiting") {
		t.Errorf("%d (Retry-After %q) %q, want 503 naming the address's share", resp.StatusCode, resp.Header.Get("Retry-After"), e.Error)
	}
}
