package playground

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/runner"
)

// TestCellTimeout: a run request's timeout_ms bounds its job below the server's limit;
// one past that limit or under a second is refused naming the field.
func TestCellTimeout(t *testing.T) {
	var got time.Duration
	ts := fakeServer(t, Options{Timeout: 20 * time.Second}, func(ctx context.Context, job runner.Job, opts runner.Options) (measure.Result, error) {
		got = job.Timeout()
		return instantRun(ctx, job, opts)
	})
	resp := postRun(t, ts.URL, `{"kernel":"fib_it","engine":"native","args":{"n":10},"timeout_ms":5000}`)
	readEvents(t, resp.Body)
	if got != 5*time.Second {
		t.Errorf("the job's limit %v, want the request's 5s", got)
	}
	resp = postRun(t, ts.URL, `{"kernel":"fib_it","engine":"native","args":{"n":10}}`)
	readEvents(t, resp.Body)
	if got != 20*time.Second {
		t.Errorf("the job's limit %v without timeout_ms, want the server's 20s", got)
	}
	for _, ms := range []string{"999", "20001"} {
		resp := postRun(t, ts.URL, `{"kernel":"fib_it","engine":"native","args":{"n":10},"timeout_ms":`+ms+`}`)
		var e apiError
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusBadRequest || e.Field != "timeout_ms" {
			t.Errorf("timeout_ms %s: %d %+v, want 400 naming timeout_ms", ms, resp.StatusCode, e)
		}
	}
}
