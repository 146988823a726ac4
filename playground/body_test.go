package playground

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/custom"
)

// Every POST route of the API reads its body through jsonBody.decode, so each refuses a
// bad body the same way: 415 for a body that is not JSON, 400 naming what follows the
// object, 400 naming an unknown field, 413 past its limit.
func TestEveryPostRouteRefusesABadBodyAlike(t *testing.T) {
	store := tempStore(t)
	ts := fakeServer(t, Options{Custom: custom.NewBuilder(custom.Options{Dir: t.TempDir()}), Results: store}, instantRun)
	routes := map[string]int64{
		"/api/run": maxRequestBody, "/api/forecast": maxRequestBody, "/api/compare": maxCompareBody, "/api/warmup": maxWarmupBody,
		"/api/custom": maxCustomBody, "/api/custom/format": maxCustomBody, "/api/results/share": maxShareBody,
	}
	post := func(path, contentType string, body []byte) (int, apiError) {
		t.Helper()
		resp, err := http.Post(ts.URL+path, contentType, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e apiError
		json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e
	}
	for path, max := range routes {
		for _, c := range []struct {
			name, contentType string
			body              []byte
			status            int
			mentions, field   string
		}{
			{"not JSON", "text/plain", []byte(`{}`), http.StatusUnsupportedMediaType, "POST " + path, ""},
			{"two objects", "application/json", []byte(`{}{}`), http.StatusBadRequest, "more than one JSON value", ""},
			{"a stray byte", "application/json", []byte(`{} x`), http.StatusBadRequest, "more than one JSON value", ""},
			{"unknown field", "application/json", []byte(`{"nosuchfield":1}`), http.StatusBadRequest, `unknown field "nosuchfield"`, "nosuchfield"},
			{"past the limit", "application/json", append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), int(max))...), http.StatusRequestEntityTooLarge, "larger than", ""},
		} {
			status, e := post(path, c.contentType, c.body)
			if status != c.status || !strings.Contains(e.Error, c.mentions) || (c.field != "" && e.Field != c.field) {
				t.Errorf("POST %s, %s: %d %+v; want %d mentioning %q (field %q)", path, c.name, status, e, c.status, c.mentions, c.field)
			}
		}
	}
}

// A parameter named twice in a query is refused on every route of the API, naming it:
// which of the values was meant cannot be told.
func TestRepeatedQueryParameterRefused(t *testing.T) {
	ts := fakeServer(t, Options{Engines: []string{"native"}}, instantRun)
	for _, tt := range []struct{ method, target, param string }{
		{http.MethodGet, "/api/expected?kernel=fib_it&kernel=fib_rec", "kernel"},
		{http.MethodGet, "/api/expected?kernel=fib_it&n=5&n=6", "n"},
		{http.MethodGet, "/api/explain?kernel=fib_rec&engine=native&profile=1&profile=0", "profile"},
		{http.MethodGet, "/api/kernels?x=1&x=2", "x"},
		{http.MethodPost, "/api/run?kernel=a&kernel=b", "kernel"},
		{http.MethodGet, "/runs/1?format=a&format=b", "format"},
	} {
		req, _ := http.NewRequest(tt.method, ts.URL+tt.target, strings.NewReader(`{"kernel":"fib_it","engine":"native"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e apiError
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || e.Field != tt.param || !strings.Contains(e.Error, "give each parameter once") {
			t.Errorf("%s %s: %d %+v, want 400 on %q saying it is given more than once", tt.method, tt.target, resp.StatusCode, e, tt.param)
		}
	}
	resp, err := http.Get(ts.URL + "/api/expected?kernel=fib_it&n=5")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a query of single parameters: status %d, want 200", resp.StatusCode)
	}
}
