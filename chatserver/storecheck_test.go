package chatserver

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// filledStore makes a store folder holding n messages to all, closed.
func filledStore(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	srv, err := New(Options{DataDir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if res := postNow(context.Background(), srv, message{From: "mary", To: "all", Text: fmt.Sprint("message number ", i, " ", strings.Repeat("x", 100)), Time: time.Now()}); res.err != nil {
			t.Fatal(res.err)
		}
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return dir
}

// zeroPages overwrites count pages of 4096 bytes from the middle of file.
func zeroPages(t *testing.T, file string, count int) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	mid := fi.Size() / 2 / 4096 * 4096
	if _, err := f.WriteAt(make([]byte, count*4096), mid-int64(count/2*4096)); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedStoreRefused: a store that is truncated (the reproduction:
// `head -c 8192 chat.db`), not a store at all, or has zeroed pages gives a
// one-line error that names the file, what is wrong and what to do — never
// a crash.
func TestDamagedStoreRefused(t *testing.T) {
	src := filepath.Join(filledStore(t, 3000), "chat.db")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	garbage := make([]byte, 64<<10)
	for i := range garbage {
		garbage[i] = byte(rand.Uint32())
	}
	for _, tc := range []struct {
		name   string
		damage func(file string)
		says   string
	}{
		{"truncated", func(f string) { os.WriteFile(f, data[:8192], 0o600) }, "truncated"},
		{"truncated-odd", func(f string) { os.WriteFile(f, data[:len(data)/2+100], 0o600) }, "truncated"},
		{"short", func(f string) { os.WriteFile(f, data[:40], 0o600) }, "too short"},
		{"garbage", func(f string) { os.WriteFile(f, garbage, 0o600) }, "not a chat store"},
		{"zeroed-middle", func(f string) { os.WriteFile(f, data, 0o600); zeroPages(t, f, 10) }, "damaged pages"},
		// Its log beside it: the store was checkpointed, so chat.db must be whole.
		{"emptied", func(f string) {
			os.WriteFile(f, nil, 0o600)
			os.WriteFile(filepath.Join(filepath.Dir(f), "chat.wal"), nil, 0o600)
		}, "is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "chat.db")
			tc.damage(file)
			srv, err := New(Options{DataDir: dir})
			if err == nil {
				srv.Shutdown(context.Background())
				t.Fatal("a damaged store was opened")
			}
			msg := err.Error()
			if !errors.Is(err, ErrStoreDamaged) || !strings.Contains(msg, file) || !strings.Contains(msg, tc.says) ||
				!strings.Contains(msg, "move it away") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line wrapping ErrStoreDamaged naming %s, saying %q and what to do", msg, file, tc.says)
			}
		})
	}
}

// TestDamageFoundWhileReading: pages damaged while the server runs are found
// by a replay, logged and reported to the resuming client, never skipped
// silently, and the server goes on.
func TestDamageFoundWhileReading(t *testing.T) {
	dir := filledStore(t, 3000)
	ts := startServer(t, Options{DataDir: dir})
	zeroPages(t, filepath.Join(dir, "chat.db"), 10)
	c := ts.resume(t, "sse", "john", "0")
	replayed := 0
	for {
		e := c.next()
		if e.text == "Welcome john!" {
			break
		}
		replayed++
	}
	if replayed >= 3000 {
		t.Fatalf("replayed %d of 3000 events from a damaged store", replayed)
	}
	found := false
	for !found {
		select {
		case cm := <-c.comments:
			found = strings.Contains(cm, "stored history is damaged")
		case <-time.After(waitFor):
			t.Fatalf("replayed %d of 3000 events and said nothing about the damage", replayed)
		}
	}
	// The server still answers.
	if status, body := ts.do(t, "GET", "/", ""); status != 200 {
		t.Fatalf("after the damage: %d %s", status, body)
	}
}
