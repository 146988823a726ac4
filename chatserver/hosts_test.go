package chatserver

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestDNSRebinding: a server bound to loopback answers only to loopback
// Host names and AllowedHosts; a WebSocket from a rebound name with a
// matching Origin is refused.
func TestDNSRebinding(t *testing.T) {
	for _, allow := range [][]string{nil, {"evil.example"}} {
		srv, err := New(Options{DataDir: t.TempDir(), AllowedHosts: allow})
		if err != nil {
			t.Fatal(err)
		}
		ln := listen(t)
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ctx, ln) }()
		ts := &testServer{srv: srv, url: "http://" + ln.Addr().String()}
		want := 403
		if allow != nil {
			want = 200
		}
		if status, body := ts.request(t, "GET", "/", "", map[string]string{"Host": "evil.example:18090"}); status != want {
			t.Errorf("allow %v: GET / with Host evil.example:18090: %d %.100s, want %d", allow, status, body, want)
		}
		for _, host := range []string{"localhost:18090", ln.Addr().String()} {
			if status, _ := ts.request(t, "GET", "/", "", map[string]string{"Host": host}); status != 200 {
				t.Errorf("GET / with Host %s: %d, want 200", host, status)
			}
		}
		d := websocket.Dialer{HandshakeTimeout: waitFor}
		ws, resp, err := d.Dial("ws://"+ln.Addr().String()+"/ws?nick=eve", http.Header{"Host": {"evil.example:18090"}, "Origin": {"http://evil.example:18090"}})
		if allow == nil {
			if err == nil {
				ws.Close()
				t.Error("a WebSocket with Host evil.example:18090 was accepted")
			} else if resp == nil || resp.StatusCode != 403 {
				t.Errorf("a WebSocket with Host evil.example:18090: %v, want 403", err)
			}
		} else if err != nil {
			t.Errorf("allowed host: WebSocket refused: %v", err)
		} else {
			ws.Close()
		}
		cancel()
		select {
		case <-served:
		case <-time.After(waitFor):
			t.Fatal("Serve did not return")
		}
	}
}
