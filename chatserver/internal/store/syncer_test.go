package store

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSyncer: what waits for a batch runs after its sync, in the order
// handed; a batch that wrote nothing waits for no sync; once a sync failed,
// every later batch gets its error; Drain returns once all ran.
func TestSyncer(t *testing.T) {
	st, _, err := Open(filepath.Join(t.TempDir(), "chat.db"), false, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	write := func(seq uint64) int64 {
		end, err := st.Write(func(tx *Tx) error { return PutRecord(tx, &Record{ID: seq, Text: "event"}) })
		if err != nil || end <= 0 {
			t.Fatalf("write %d: end %d, %v", seq, end, err)
		}
		return end
	}
	y := NewSyncer(st)
	var ran []string // only the syncer's goroutine appends, until Drain
	after := func(name string, end int64) {
		y.After(end, func(err error) {
			if err != nil {
				name += " failed"
			}
			ran = append(ran, name)
		})
	}
	after("first", write(1))
	y.Drain()
	if synced := st.wal.synced.Load(); synced != st.wal.size.Load() {
		t.Fatalf("after the first batch ran: %d bytes of %d synced", synced, st.wal.size.Load())
	}
	second, third := write(2), write(3)
	st.wal.f.Close() // the next sync fails
	after("second", second)
	after("nothing written", 0)
	after("third", third)
	y.Drain()
	y.Close()
	want := []string{"first", "second failed", "nothing written", "third failed"}
	if !slices.Equal(ran, want) {
		t.Errorf("ran %q, want %q", ran, want)
	}
}

// TestSyncerWithoutSync: with no sync to wait for (--no-fsync), a batch's
// function runs at once on the writer's goroutine when nothing handed
// before it is still waiting, and after those otherwise.
func TestSyncerWithoutSync(t *testing.T) {
	st, _, err := Open(filepath.Join(t.TempDir(), "chat.db"), true, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	y := NewSyncer(st)
	defer y.Close()
	ranAtOnce := false
	y.After(1, func(error) { ranAtOnce = true })
	if !ranAtOnce {
		t.Fatal("with nothing waiting, the function did not run at once")
	}
	var order []int // appended on the syncer's goroutine, then on this one
	hold, held := make(chan struct{}), make(chan struct{})
	y.handed.Add(1)
	y.queue <- syncJob{then: func(error) { close(held); <-hold; order = append(order, 1) }}
	<-held
	ran := make(chan struct{})
	y.After(1, func(error) { order = append(order, 2); close(ran) }) // queued: the first still waits
	select {
	case <-ran:
		t.Error("a function ran before the one handed earlier was done")
	case <-time.After(50 * time.Millisecond):
	}
	close(hold)
	<-ran
	y.Drain()
	if !slices.Equal(order, []int{1, 2}) {
		t.Errorf("ran %v, want [1 2]", order)
	}
}
