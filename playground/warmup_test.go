package playground

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

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
		{`{"engines":["native","yaegi"],"executions":20}`, "budget_ms", "this server allows"},
		{`{"engines":["native"],"kernel":"nope"}`, "kernel", "nope"},
		{`{"engines":["native"],"args":{"n":500}}`, "args.n", "out of range"},
		{`{"series":[]}`, "series", "allowed 1 to"},
		{`{"series":[{"engine":"x","runs":[]}]}`, "series", "needs an engine"},
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
