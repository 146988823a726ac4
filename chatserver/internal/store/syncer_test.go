package store

import (
	"path/filepath"
	"slices"
	"testing"
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
		end, err := st.Write(func(tx *Tx) error { return PutSeq(tx, seq) })
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
