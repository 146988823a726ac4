package chatserver

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ab does what `ab -n n -c c url` does: n GETs from c workers, a new
// connection for each (ab sends no keep-alive), and counts as failed every
// error, non-200 answer and answer whose length differs from the first.
func ab(t *testing.T, url string, n, c int) (failed int64, perSecond float64) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: waitFor}
	var next, bad atomic.Int64
	var firstLen atomic.Int64
	firstLen.Store(-1)
	var wg sync.WaitGroup
	start := time.Now()
	for range c {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				resp, err := hc.Get(url)
				if err != nil {
					bad.Add(1)
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				firstLen.CompareAndSwap(-1, int64(len(body)))
				if err != nil || resp.StatusCode != 200 || int64(len(body)) != firstLen.Load() {
					if bad.Add(1) == 1 {
						t.Logf("first failure: %s %q %v", resp.Status, body, err)
					}
				}
			}
		})
	}
	wg.Wait()
	return bad.Load(), float64(n) / time.Since(start).Seconds()
}

// TestArticleAB runs the article's two ab command lines, with the default
// limits: the static page, then sends with a receiver connected.
func TestArticleAB(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 requests")
	}
	ts := startServer(t, Options{}) // the defaults, as `wasmgap chat` runs

	// ab -n 10000 -c 10 http://localhost:8000/
	failed, rps := ab(t, ts.url+"/", 10000, 10)
	t.Logf("GET /: 10000 requests, 10 concurrent: %d failed, %.0f requests/s", failed, rps)
	if failed != 0 {
		t.Fatalf("%d of 10000 page requests failed", failed)
	}

	// curl -sN -H "Accept: text/event-stream" http://localhost:8000/john
	john := ts.login(t, "sse", "john")
	john.expect("Welcome john!", "now online: ")
	// ab -n 10000 -c 10 http://localhost:8000/msg/mary/john%20hello
	failed, rps = ab(t, ts.url+"/msg/mary/john%20hello", 10000, 10)
	t.Logf("GET /msg/mary/john%%20hello: 10000 requests, 10 concurrent: %d failed, %.0f requests/s", failed, rps)
	if failed != 0 {
		t.Fatalf("%d of 10000 sends failed", failed)
	}
	for i := range 10000 {
		if e := john.next(); e.text != "mary: hello" {
			t.Fatalf("message %d: %q", i, e.text)
		}
	}
	john.quiet()
}
