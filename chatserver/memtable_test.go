package chatserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestCheckpointsUnderTraffic: with a checkpoint every few KB of log,
// sends and deliveries go on across checkpoints; a resume replays history
// that lies partly in chat.db and partly in the memtable, in order and
// once; after a restart the offline messages are all there.
func TestCheckpointsUnderTraffic(t *testing.T) {
	ts := startServer(t, Options{})
	h := ts.srv.localHub()
	h.do(context.Background(), &inspectReq{fn: func(h *hub) { h.checkpointAt, h.checkpointEvery = 4096, 4096 }})
	joe := ts.login(t, "sse", "joe")
	joe.expect("Welcome joe!", "now online: ")
	from := joe.lastID
	const n = 300
	for i := range n {
		if status, body := ts.msg(t, "mary", "all", fmt.Sprint("m ", i)); status != 200 {
			t.Fatalf("send %d: %d %s", i, status, body)
		}
		if i%3 == 0 {
			if status, body := ts.post(t, "mary", "bob", fmt.Sprint("kept ", i)); status != 200 {
				t.Fatalf("send %d to bob: %d %s", i, status, body)
			}
		}
	}
	for i := range n {
		joe.expect(fmt.Sprint("mary to all: m ", i))
	}
	var logSize int64
	var inDB int
	h.do(context.Background(), &inspectReq{fn: func(h *hub) {
		st, err := h.store.Stats()
		if err != nil {
			t.Error(err)
		}
		logSize, inDB = st.LogBytes, st.DBEvents
	}})
	if inDB == 0 || logSize > 8192 {
		t.Fatalf("no checkpoint ran: %d events in chat.db, %d bytes of log", inDB, logSize)
	}

	again := ts.resume(t, "sse", "joe", fmt.Sprint(from))
	for i := 0; i < n; {
		e := again.next()
		if strings.HasPrefix(e.text, "mary to all: ") {
			if want := fmt.Sprint("mary to all: m ", i); e.text != want {
				t.Fatalf("replay across checkpoints: got %q, want %q", e.text, want)
			}
			i++
		}
	}

	dir := ts.dir
	ts.stop()
	ts2 := startServer(t, Options{DataDir: dir})
	bob := ts2.login(t, "ws", "bob")
	bob.expect("Welcome bob!", "now online: ")
	for i := 0; i < n; i += 3 {
		bob.expectOffline("mary", fmt.Sprint("kept ", i))
	}
}
