package playground

import (
	"context"
	"encoding/json"
	"net/http/httptest"
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
	first, err := q.enter()
	if err != nil {
		t.Fatal(err)
	}
	second, _ := q.enter()
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
