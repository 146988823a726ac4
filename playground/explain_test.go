package playground

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wasmgap/wasmgap/internal/explain"
	"github.com/wasmgap/wasmgap/kernels"
)

func TestExplainAPIErrors(t *testing.T) {
	ts := fakeServer(t, Options{}, nil)
	for _, tt := range []struct{ query, field string }{
		{"kernel=nope&engine=source", "kernel"},
		{"kernel=fib_rec&engine=nope", "engine"},
		{"kernel=fib_rec&engine=source&n=x", "args.n"},
		{"kernel=fib_rec&engine=source&n=200", "args.n"},
		{"kernel=fib_rec&engine=source&m=2", "args.m"},
		{"kernel=fib_rec&engine=source&profile=maybe", "profile"},
	} {
		resp, err := http.Get(ts.URL + "/api/explain?" + tt.query)
		if err != nil {
			t.Fatal(err)
		}
		var e apiError
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || e.Field != tt.field {
			t.Errorf("%s: %d %+v, want 400 naming %s", tt.query, resp.StatusCode, e, tt.field)
		}
	}
}

// TestExplainAPIInChild explains the Go source in a child process (this test binary,
// through TestMain) and answers the second request from the cache.
func TestExplainAPIInChild(t *testing.T) {
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
	}
}

func TestExplainAPIBusyAndFailures(t *testing.T) {
	h := newExplainHandler()
	var calls atomic.Int32
	h.run = func(ctx context.Context, k *kernels.Kernel, args []int, engine string, profile bool) (*explain.Report, error) {
		if calls.Add(1) == 1 {
			return nil, errors.New("first fails")
		}
		return &explain.Report{Kernel: k.Name}, nil
	}
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/api/explain?kernel=fib_it&engine=native", nil)
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	if code, body := get(); code != http.StatusInternalServerError || !strings.Contains(body, "first fails") {
		t.Errorf("a failed explanation: %d %s", code, body)
	}
	if code, _ := get(); code != http.StatusOK {
		t.Errorf("a failure is not kept: the retry answered %d", code)
	}
	// The waiting room full: 503 with Retry-After.
	for range explainWaiting {
		h.wait <- struct{}{}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/explain?kernel=fib_it&engine=native&n=3", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("busy: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
}
