package playground

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/runner"
)

// POST /api/run takes only JSON: a text/plain body, which a page of another site can send
// without a preflight, is refused with 415 before anything runs.
func TestRunRequiresJSON(t *testing.T) {
	ran := false
	ts := fakeServer(t, Options{}, func(ctx context.Context, job runner.Job, opts runner.Options) (measure.Result, error) {
		ran = true
		return instantRun(ctx, job, opts)
	})
	for _, ct := range []string{"text/plain", "", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/run", strings.NewReader(`{"kernel":"fib_it","engine":"native"}`))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e apiError
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(e.Error, "application/json") {
			t.Errorf("Content-Type %q: status %d, error %q; want 415 naming application/json", ct, resp.StatusCode, e.Error)
		}
	}
	if ran {
		t.Error("a run started for a request that is not JSON")
	}
	resp := postRun(t, ts.URL, `{"kernel":"fib_it","engine":"native"}`)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("application/json: status %d, want 200", resp.StatusCode)
	}
}

// A browser's cross-origin POST /api/run is refused.
func TestRunRefusesCrossOrigin(t *testing.T) {
	ts := fakeServer(t, Options{}, instantRun)
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/run", strings.NewReader(`{"kernel":"fib_it","engine":"native"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "cross-origin") {
		t.Errorf("cross-site POST: status %d %q, want 403", resp.StatusCode, body)
	}
}

// A body that trickles in is cut at BodyTimeout: its connection is closed and the
// handler does not wait for it.
func TestSlowBodyTimesOut(t *testing.T) {
	ts := fakeServer(t, Options{BodyTimeout: 500 * time.Millisecond}, instantRun)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"kernel":"fib_it","engine":"native"}`
	if _, err := io.WriteString(conn, "POST /api/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
		"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body[:3]); err != nil {
		t.Fatal(err)
	}
	// Never send the rest. The server answers (408) or closes within a bounded time.
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server still waits for the body 20s later (read %q)", got)
	}
	if len(got) > 0 && !strings.HasPrefix(string(got), "HTTP/1.1 408") {
		t.Errorf("answer %q, want a 408 or a closed connection", got)
	}
}

// A body that arrives in time leaves no deadline behind: a run that streams for longer
// than BodyTimeout is not cut.
func TestBodyDeadlineLiftedAfterBody(t *testing.T) {
	ts := fakeServer(t, Options{BodyTimeout: 200 * time.Millisecond}, func(ctx context.Context, job runner.Job, opts runner.Options) (measure.Result, error) {
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return measure.Result{}, ctx.Err()
		}
		return instantRun(ctx, job, opts)
	})
	events := readEvents(t, postRun(t, ts.URL, `{"kernel":"fib_it","engine":"native","runs":1}`).Body)
	if len(events) == 0 || events[len(events)-1].Type != "result" {
		t.Errorf("events %+v, want a result after a run longer than the body timeout", events)
	}
}

// Shutdown ends the runs in progress and tells their clients why, and refuses new ones.
func TestShutdownEndsRuns(t *testing.T) {
	b := newBlockingRuns()
	s := New(Options{MaxConcurrent: 1})
	s.run = b.run
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)

	running := postRun(t, ts.URL, `{"kernel":"fib_rec","engine":"native","args":{"n":60}}`)
	receive(t, b.started, "the run")
	queued := postRun(t, ts.URL, `{"kernel":"ack","engine":"native"}`)
	sc := bufio.NewScanner(queued.Body)
	if !sc.Scan() || !strings.Contains(sc.Text(), `"queued"`) {
		t.Fatalf("second run: %q, want queued", sc.Text())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]io.Reader{"running": running.Body, "queued": io.MultiReader(strings.NewReader(sc.Text()+"\n"), queued.Body)} {
		events := readEvents(t, body)
		if last := events[len(events)-1]; last.Type != "error" || !strings.Contains(last.Error, "shutting down") {
			t.Errorf("%s run: last event %+v, want an error saying the server is shutting down", name, last)
		}
	}
	after := postRun(t, ts.URL, `{"kernel":"ack","engine":"native"}`)
	if after.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a run after Shutdown: status %d, want 503", after.StatusCode)
	}
}
