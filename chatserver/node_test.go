package chatserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// recordingNode is a node that records the posts handed to it.
type recordingNode struct {
	node
	mu    sync.Mutex
	posts map[string]bool // text → pipelined
}

func (n *recordingNode) post(ctx context.Context, m message, pipelined bool, then func(result)) error {
	n.mu.Lock()
	n.posts[m.Text] = pipelined
	n.mu.Unlock()
	return n.node.post(ctx, m, pipelined, then)
}

// TestEverySendGoesThroughTheNode: the article's route on the fast path
// and on net/http, POST /send and a WebSocket's frames all reach the
// server's one node, the frames pipelined.
func TestEverySendGoesThroughTheNode(t *testing.T) {
	srv, err := New(Options{DataDir: t.TempDir(), LeaveGrace: -1})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingNode{node: srv.node, posts: map[string]bool{}}
	srv.node = rec // before anything serves
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	ts := &testServer{srv: srv, url: "http://" + ln.Addr().String()}

	c := ts.login(t, "ws", "john")
	c.expect("Welcome john!", "now online: ")
	c.send("all", "frame")
	c.expect("john to all: frame")
	if code, body := ts.msg(t, "mary", "john", "fast"); code != http.StatusOK {
		t.Fatalf("GET /msg/ (fast path): %d %s", code, body)
	}
	c.expect("mary: fast")
	if code, body := ts.post(t, "mary", "john", "json"); code != http.StatusOK {
		t.Fatalf("POST /send: %d %s", code, body)
	}
	c.expect("mary: json")
	// The article's route answered by net/http (the handler, as behind a
	// mount in another server).
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/msg/mary/john%20handler", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("GET /msg/ (handler): %d %s", w.Code, w.Body)
	}
	c.expect("mary: handler")

	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := map[string]bool{"frame": true, "fast": false, "json": false, "handler": false}
	for text, pipelined := range want {
		got, ok := rec.posts[text]
		if !ok {
			t.Errorf("the send %q did not go through the node", text)
		} else if got != pipelined {
			t.Errorf("the send %q: pipelined %v, want %v", text, got, pipelined)
		}
	}
}
