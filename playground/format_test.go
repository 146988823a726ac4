package playground

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	ts := fakeServer(t, Options{}, instantRun)
	post := func(body string) (int, map[string]string) {
		resp, err := http.Post(ts.URL+"/api/custom/format", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]string
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	code, m := post(`{"source":"package kernel\nfunc F(n int) int64 {return int64(n)}"}`)
	if want := "package kernel\n\nfunc F(n int) int64 { return int64(n) }\n"; code != http.StatusOK || m["source"] != want {
		t.Errorf("format: %d %q, want %q", code, m["source"], want)
	}
	if code, m := post(`{"source":"package kernel\nfunc F( {"}`); code != http.StatusUnprocessableEntity || !strings.Contains(m["error"], "gofmt: ") {
		t.Errorf("a source that does not parse: %d %v, want 422 with gofmt's error", code, m)
	}
	if code, _ := post(`{"src":"x"}`); code != http.StatusBadRequest {
		t.Errorf("an unknown field: %d, want 400", code)
	}
}
