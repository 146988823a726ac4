package chatserver

import (
	"net/http"
	"testing"

	"github.com/gorilla/websocket"
)

// TestDNSRebinding: a server bound to loopback answers only to loopback
// Host names and AllowedHosts; a WebSocket from a rebound name with a
// matching Origin is refused.
func TestDNSRebinding(t *testing.T) {
	for _, allow := range [][]string{nil, {"evil.example"}} {
		ts, stop := serveOn(t, Options{AllowedHosts: allow})
		want := 403
		if allow != nil {
			want = 200
		}
		if status, body := ts.request(t, "GET", "/", "", map[string]string{"Host": "evil.example:18090"}); status != want {
			t.Errorf("allow %v: GET / with Host evil.example:18090: %d %.100s, want %d", allow, status, body, want)
		}
		for _, host := range []string{"localhost:18090", ts.hostPort()} {
			if status, _ := ts.request(t, "GET", "/", "", map[string]string{"Host": host}); status != 200 {
				t.Errorf("GET / with Host %s: %d, want 200", host, status)
			}
		}
		d := websocket.Dialer{HandshakeTimeout: waitFor}
		ws, resp, err := d.Dial("ws://"+ts.hostPort()+"/ws?nick=eve", http.Header{"Host": {"evil.example:18090"}, "Origin": {"http://evil.example:18090"}})
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
		stop()
	}
}
