package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/kernels"
)

func resultsServer(t *testing.T, opts Options) (*httptest.Server, *results.Store) {
	t.Helper()
	store := tempStore(t)
	opts.Results = store
	ts := httptest.NewServer(New(opts))
	t.Cleanup(ts.Close)
	return ts, store
}

// goodShare is a submission as the page sends it: fib_it(30) and ack(3, 4) on browser-wasm.
func goodShare() map[string]any {
	cell := func(name string, args []int) map[string]any {
		k, _ := kernels.Lookup(name)
		return map[string]any{"kernel": name, "args": args, "engine": "browser-wasm", "warmup": 1, "calls": 100,
			"value": strconv.FormatInt(k.Expected(args), 10), "samples_ns": []float64{110, 100, 105}, "first_ns": 5000}
	}
	return map[string]any{
		"browser": map[string]any{"user_agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 Safari/537.36",
			"hardware_concurrency": 2, "cross_origin_isolated": true, "timer_resolution_ns": 5000},
		"method": map[string]any{"runs": 3, "warmup": 1, "min_sample_ns": 1e7},
		"cells":  []any{cell("fib_it", []int{30}), cell("ack", []int{3, 4})},
	}
}

func postShare(t *testing.T, url string, body []byte, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/api/results/share", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.ReplaceAll(string(b), `\"`, `"`)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestShareRefusesTamperedSubmissions: each tampered submission is refused with its
// reason and stores nothing; the untampered one is stored as measured by a browser.
func TestShareRefusesTamperedSubmissions(t *testing.T) {
	ts, store := resultsServer(t, Options{})
	tamper := func(f func(m map[string]any)) []byte {
		m := goodShare()
		f(m)
		return mustJSON(m)
	}
	cell0 := func(m map[string]any) map[string]any { return m["cells"].([]any)[0].(map[string]any) }
	many := make([]float64, 4)
	for i := range many {
		many[i] = 100
	}
	for _, c := range []struct {
		name   string
		body   []byte
		header map[string]string
		status int
		want   string
	}{
		{"wrong value", tamper(func(m map[string]any) { cell0(m)["value"] = "832041" }), nil, 400, "fib_it(30) on browser-wasm: value 832041 is not the catalogue's 832040"},
		{"too many samples", tamper(func(m map[string]any) { cell0(m)["samples_ns"] = many }), nil, 400, "4 samples: allowed 1 to the run's 3 timed runs"},
		{"negative sample", tamper(func(m map[string]any) { cell0(m)["samples_ns"] = []float64{-1} }), nil, 400, "out of range"},
		{"server engine", tamper(func(m map[string]any) { cell0(m)["engine"] = "native" }), nil, 400, `engine "native" is not a browser engine`},
		{"bad args", tamper(func(m map[string]any) { cell0(m)["args"] = []int{93} }), nil, 400, "out of range"},
		{"unknown kernel", tamper(func(m map[string]any) { cell0(m)["kernel"] = "fib" }), nil, 400, `unknown kernel "fib"`},
		{"10 MB body", append(append([]byte(`{"cells":[],"pad":"`), bytes.Repeat([]byte("x"), 10<<20)...), '"', '}'), nil, 413, "larger than"},
		{"wrong content type", mustJSON(goodShare()), map[string]string{"Content-Type": "text/plain"}, 415, "application/json"},
		{"another origin", mustJSON(goodShare()), map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403, "cross-origin request refused"},
		{"unknown field", []byte(`{"cells":[],"admin":true}`), nil, 400, `unknown field "admin"`},
	} {
		status, body := postShare(t, ts.URL, c.body, c.header)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s; want %d and %q", c.name, status, body, c.status, c.want)
		}
	}
	if list, err := store.List(context.Background(), results.Filter{}); err != nil || len(list) != 0 {
		t.Fatalf("tampered submissions stored %d runs (%v)", len(list), err)
	}

	status, body := postShare(t, ts.URL, mustJSON(goodShare()), map[string]string{"Sec-Fetch-Site": "same-origin"})
	if status != http.StatusCreated {
		t.Fatalf("the good submission: %d %s", status, body)
	}
	var ans shareAnswer
	_ = json.Unmarshal([]byte(body), &ans)
	run, err := store.Get(context.Background(), ans.Run)
	if err != nil {
		t.Fatal(err)
	}
	if run.Source != results.SourceBrowser || run.Browser.Name != "Chrome" || run.Browser.Version != "140" || run.Report.Environment.OS != "linux" ||
		len(run.Report.Results) != 2 || run.Report.Results[0].Median != 105 {
		t.Errorf("stored %+v", run)
	}

	// The Results tab's query sees it; the stored run and a comparison are served.
	resp, err := http.Get(ts.URL + "/api/results?kernel=fib_it&args=30&browser=Chrome")
	if err != nil {
		t.Fatal(err)
	}
	var d results.Distribution
	_ = json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
	if len(d.Engines) != 1 || d.Engines[0].Points[0].Run != ans.Run {
		t.Errorf("distribution %+v", d)
	}
	for _, c := range []struct {
		path   string
		status int
	}{{"/api/results/" + strconv.FormatInt(ans.Run, 10), 200}, {"/api/results/999", 404}, {"/api/results/x", 400},
		{"/api/results/compare?old=1&new=1", 200}, {"/api/results?kernel=nope", 400}} {
		resp, err := http.Get(ts.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("GET %s: %d, want %d", c.path, resp.StatusCode, c.status)
		}
	}
}

func TestShareRateLimit(t *testing.T) {
	ts, _ := resultsServer(t, Options{})
	var last int
	for range shareBurst + 1 {
		last, _ = postShare(t, ts.URL, []byte(`{}`), nil)
	}
	if last != http.StatusTooManyRequests {
		t.Errorf("submission %d from one address: %d, want 429", shareBurst+1, last)
	}
}

func TestBrowserOf(t *testing.T) {
	for ua, want := range map[string]string{
		"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0":                                                "Firefox 128 linux",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15": "Safari 17 darwin",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36 Edg/140.0": "Edge 140 windows",
		"curl/8": "other  unknown",
	} {
		n, v := browserOf(ua)
		if got := n + " " + v + " " + osOf(ua); got != want {
			t.Errorf("%s: %q, want %q", ua, got, want)
		}
	}
}

// Every per-address limit of the playground counts an IPv6 client by its /64, as the
// chat's do: the addresses of one subscriber are one client.
func TestClientOfKeysIPv6ByPrefix(t *testing.T) {
	key := func(remote string) string {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		return clientOf(r)
	}
	if a, b := key("[2001:db8:1:2::1]:1000"), key("[2001:db8:1:2:ffff::9]:2000"); a != b || a != "2001:db8:1:2::/64" {
		t.Errorf("two addresses of one /64: %q and %q, want both 2001:db8:1:2::/64", a, b)
	}
	if a, b := key("[2001:db8:1:2::1]:1000"), key("[2001:db8:1:3::1]:1000"); a == b {
		t.Errorf("two /64s share the key %q", a)
	}
	if got := key("192.0.2.7:1234"); got != "192.0.2.7" {
		t.Errorf("an IPv4 client: %q, want 192.0.2.7", got)
	}
}
