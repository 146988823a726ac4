package chatserver

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

// TestTrustedProxy (issue 21, item 8): behind a trusted proxy every
// client has its own stream limit; anyone else's X-Forwarded-For is
// ignored, so it cannot dodge the limit.
func TestTrustedProxy(t *testing.T) {
	login := func(ts *testServer, nick, xff string) (int, string) {
		status, body, _, c := ts.sseLogin(t, nick, "", http.Header{"X-Forwarded-For": {xff}})
		if c != nil {
			t.Cleanup(c.close)
		}
		return status, body
	}
	ts := startServer(t, Options{MaxConnsPerAddr: 1, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if status, body := login(ts, "bob", "203.0.113.1"); status != 200 {
		t.Fatalf("bob through the proxy: %d %s", status, body)
	}
	if status, body := login(ts, "alice", "203.0.113.2"); status != 200 {
		t.Fatalf("alice, another client of the proxy: %d %s", status, body)
	}
	for _, xff := range []string{"203.0.113.1", "198.51.100.7, 203.0.113.1"} {
		if status, body := login(ts, "carol", xff); status != 429 || !strings.Contains(body, "from 203.0.113.1") {
			t.Errorf("a second stream of 203.0.113.1 (X-Forwarded-For %s): %d %q, want 429 naming it", xff, status, body)
		}
	}

	open := startServer(t, Options{MaxConnsPerAddr: 1})
	if status, body := login(open, "bob", "203.0.113.1"); status != 200 {
		t.Fatalf("bob: %d %s", status, body)
	}
	if status, body := login(open, "alice", "203.0.113.2"); status != 429 || !strings.Contains(body, "from 127.0.0.1") {
		t.Errorf("no trusted proxy: X-Forwarded-For must be ignored: %d %q", status, body)
	}
}

// TestHeaderLimit (issue 21, item 17): a request head of up to 16 KiB is
// read, a longer one refused with 431, as docs/SECURITY.md says.
func TestHeaderLimit(t *testing.T) {
	ts, _ := serveOn(t, Options{})
	for _, tc := range []struct {
		pad    int
		status int
	}{{15 << 10, 200}, {17 << 10, 431}, {19 << 10, 431}} {
		c, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /msg/mary/john%%20hi HTTP/1.1\r\nHost: %s\r\nX-Pad: %s\r\nConnection: close\r\n\r\n", strings.TrimPrefix(ts.url, "http://"), strings.Repeat("a", tc.pad))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%d bytes of header: %v", tc.pad, err)
		}
		resp.Body.Close()
		c.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%d bytes of header: %d, want %d", tc.pad, resp.StatusCode, tc.status)
		}
	}
}
