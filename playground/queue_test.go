package playground

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/custom"
)

// countRuns counts what a queue tells its watcher.
type countRuns struct {
	mu              sync.Mutex
	started, ending int
}

func (c *countRuns) RunStarted() { c.mu.Lock(); c.started++; c.mu.Unlock() }
func (c *countRuns) RunEnded()   { c.mu.Lock(); c.ending++; c.mu.Unlock() }

func (c *countRuns) inFlight() (started, inFlight int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started, c.started - c.ending
}

// The queue tells its watcher of every run that starts and ends, a queued one when its
// turn comes.
func TestQueueTellsRuns(t *testing.T) {
	q := newQueue(1, 4)
	c := &countRuns{}
	q.runs = c
	first, err := q.enter("a", measured)
	if err != nil {
		t.Fatal(err)
	}
	second, _ := q.enter("a", measured)
	for _, step := range []struct {
		do                func()
		started, inFlight int
	}{
		{func() {}, 1, 1},
		{first.release, 2, 1},
		{func() {
			if err := second.wait(context.Background(), func(int) {}); err != nil {
				t.Fatal(err)
			}
		}, 2, 1},
		{second.release, 2, 0},
	} {
		step.do()
		if s, n := c.inFlight(); s != step.started || n != step.inFlight {
			t.Fatalf("%d started, %d in flight; want %d, %d", s, n, step.started, step.inFlight)
		}
	}
}

// The catalogue says whether the build cache warm-up is going: here it waits on a run
// in flight.
func TestCatalogueSaysWarming(t *testing.T) {
	b := custom.NewBuilder(custom.Options{Dir: t.TempDir()})
	ts := httptest.NewServer(New(Options{Custom: b}))
	defer ts.Close()
	warming := func() bool {
		resp, err := ts.Client().Get(ts.URL + "/api/kernels")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var c struct {
			CustomWarming bool `json:"custom_warming"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
			t.Fatal(err)
		}
		return c.CustomWarming
	}
	if warming() {
		t.Fatal("custom_warming before any warm-up")
	}
	b.RunStarted()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- b.Warm(ctx) }()
	for deadline := time.Now().Add(time.Minute); !warming(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("custom_warming still false a minute after the warm-up began")
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("a warm-up cancelled while it waited returned nil")
	}
	if warming() {
		t.Error("custom_warming after the warm-up ended")
	}
}

// peerServer serves s with each request's address taken from its X-Test-Peer header, so
// that one test on loopback speaks as several clients.
func peerServer(t *testing.T, s *Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.RemoteAddr = r.Header.Get("X-Test-Peer") + ":1"
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// postFrom posts a run as the client at addr; the run ends with ctx.
func postFrom(ctx context.Context, t *testing.T, url, addr, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/run", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Test-Peer", addr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// One address that floods the queue gets its share of it, and another address's run
// starts at once on the slot left to others.
func TestQueueSharesBetweenAddresses(t *testing.T) {
	b := newBlockingRuns()
	b.started, b.cancelled = make(chan string, 100), make(chan string, 100)
	s := New(Options{Engines: []string{"native"}, MaxConcurrent: 2, MaxQueued: 64})
	s.run = b.run
	ts := peerServer(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	const flood = 75 // as 5 explanations and 70 studies
	firsts := make(chan string, flood)
	var wg sync.WaitGroup
	for range flood {
		wg.Go(func() {
			resp := postFrom(ctx, t, ts.URL, "192.0.2.1", `{"kernel":"fib_rec","engine":"native","args":{"n":60}}`)
			if resp.StatusCode != http.StatusOK {
				firsts <- fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("Retry-After"))
				return
			}
			line, _ := bufio.NewReader(resp.Body).ReadBytes('\n')
			var e event
			_ = json.Unmarshal(line, &e)
			firsts <- fmt.Sprintf("%s %d", e.Type, e.Position)
		})
	}
	wg.Wait()
	close(firsts)
	got := map[string]int{}
	for f := range firsts {
		got[f]++
	}
	running, waiting := s.queue.stats()
	perWaiting := 64 / 4
	want := map[string]int{"started 0": 1, "503 10": flood - 1 - perWaiting}
	for p := 1; p <= perWaiting; p++ {
		want[fmt.Sprintf("queued %d", p)] = 1
	}
	if !maps.Equal(got, want) || running != 1 || waiting != perWaiting {
		t.Fatalf("the flood's first answers %v (%d running, %d waiting), want %v: one slot of two, a quarter of the line, the rest 503 with Retry-After", got, running, waiting, want)
	}

	resp := postFrom(ctx, t, ts.URL, "198.51.100.7", `{"kernel":"fib_it","engine":"native"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("another address's run: status %d, want 200", resp.StatusCode)
	}
	line, _ := bufio.NewReader(resp.Body).ReadBytes('\n')
	if e := (event{}); json.Unmarshal(line, &e) != nil || e.Type != "started" {
		t.Fatalf("another address's run begins with %s, want started", line)
	}
}

// The line is served by round: a newcomer goes before the waiting runs of an address
// that already runs, and a slot freed while only that address waits stays free.
func TestQueueOrderByRound(t *testing.T) {
	q := newQueue(2, 8)
	enter := func(client string) *ticket {
		t.Helper()
		tk, err := q.enter(client, measured)
		if err != nil {
			t.Fatalf("%s: %v", client, err)
		}
		return tk
	}
	granted := func(tk *ticket) bool {
		select {
		case <-tk.granted:
			return true
		default:
			return false
		}
	}
	a1, a2, a3 := enter("a"), enter("a"), enter("a")
	if !granted(a1) || granted(a2) || a2.position() != 1 || a3.position() != 2 {
		t.Fatalf("a's runs: granted %v %v, positions %d %d; want the first running, the others at 1 and 2 (one slot an address)", granted(a1), granted(a2), a2.position(), a3.position())
	}
	if _, err := q.enter("a", measured); err == nil {
		t.Fatal("a third waiting run of a, past its share of 2, was admitted")
	} else if !strings.Contains(err.Error(), "this address has 1 runs running and 2 waiting") {
		t.Fatalf("refusal %q", err)
	}
	c1 := enter("c")
	if !granted(c1) {
		t.Fatal("c's run waits with a slot free")
	}
	b1 := enter("b")
	if granted(b1) || b1.position() != 1 || a2.position() != 2 || a3.position() != 3 {
		t.Fatalf("positions b %d, a %d %d; want b first, before a's", b1.position(), a2.position(), a3.position())
	}
	c1.release()
	if !granted(b1) || granted(a2) {
		t.Fatal("c's slot went to a, whose address runs already, before b")
	}
	b1.release()
	if granted(a2) {
		t.Fatal("a runs twice at once")
	}
	if running, waiting := q.stats(); running != 1 || waiting != 2 {
		t.Fatalf("%d running, %d waiting; want 1 and 2", running, waiting)
	}
	a1.release()
	if !granted(a2) || a3.position() != 1 {
		t.Fatalf("after a's run: its next granted %v, the last at %d", granted(a2), a3.position())
	}
}

// A build takes a place as a run does, but does not pause the build cache's warm-up,
// which a build waits for.
func TestQueueBuildsDoNotPauseWarmup(t *testing.T) {
	q := newQueue(2, 4)
	c := &countRuns{}
	q.runs = c
	b, err := q.enter("a", building)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := c.inFlight(); s != 0 {
		t.Fatalf("a build told the watcher of %d runs", s)
	}
	if _, err := q.enter("a", measured); err != nil {
		t.Fatal(err)
	}
	b.release()
	if s, n := c.inFlight(); s != 1 || n != 1 {
		t.Fatalf("%d started, %d in flight; want the run that followed the build", s, n)
	}
}

// stats reports how many runs are running and waiting.
func (q *queue) stats() (running, waiting int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running, len(q.waiting)
}
