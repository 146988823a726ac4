package chatserver

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// keptMsg sends GET /msg/ on a new keep-alive connection from this host
// (a trusted proxy), for the client xff, and returns the answer's status
// and body; the connection stays open (closed at the test's end).
func keptMsg(t *testing.T, ts *testServer, xff string) (int, string) {
	t.Helper()
	host := strings.TrimPrefix(ts.url, "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /msg/mary/john%%20hi HTTP/1.1\r\nHost: %s\r\nX-Forwarded-For: %s\r\n\r\n", host, xff)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err.Error() // closed without an answer
	}
	defer resp.Body.Close()
	var b strings.Builder
	bufio.NewReader(resp.Body).WriteTo(&b)
	return resp.StatusCode, b.String()
}

// TestOpenConnsBehindProxy: behind a trusted proxy the open-connection
// cap counts each forwarded client (a keep-alive connection counts for
// the client of its latest request), and the proxy has a cap of its own,
// so one client holding its most leaves room for the others.
func TestOpenConnsBehindProxy(t *testing.T) {
	ts, _ := serveOn(t, Options{LeaveGrace: -1, MaxOpenConnsPerAddr: 3, MaxOpenConnsPerProxy: 7,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	for i := range 3 {
		if status, body := keptMsg(t, ts, "10.0.0.1"); status != 200 {
			t.Fatalf("connection %d of 10.0.0.1: %d %s", i+1, status, body)
		}
	}
	if status, body := keptMsg(t, ts, "10.0.0.1"); status != http.StatusTooManyRequests || !strings.Contains(body, "10.0.0.1") {
		t.Fatalf("a 4th open connection of 10.0.0.1: %d %q, want 429 naming it", status, body)
	}
	for i := range 3 {
		if status, body := keptMsg(t, ts, "10.0.0.2"); status != 200 {
			t.Fatalf("connection %d of 10.0.0.2, another client of the proxy: %d %s", i+1, status, body)
		}
	}
	// 6 open through the proxy, and one of a third client: its cap of 7.
	if status, body := keptMsg(t, ts, "10.0.0.3"); status != 200 {
		t.Fatalf("10.0.0.3: %d %s", status, body)
	}
	if status, body := keptMsg(t, ts, "10.0.0.4"); status != http.StatusTooManyRequests || !strings.Contains(body, "127.0.0.1") {
		t.Fatalf("an 8th connection of the proxy: %d %q, want 429 naming the proxy", status, body)
	}
}

// TestStreamsBehindProxyHoldTheirConnections: a stream through a trusted
// proxy counts as an open connection of its client until it ends.
func TestStreamsBehindProxyHoldTheirConnections(t *testing.T) {
	ts, _ := serveOn(t, Options{LeaveGrace: -1, MaxOpenConnsPerAddr: 2,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	var streams []*client
	for _, nick := range []string{"bob", "carol"} {
		status, body, _, c := ts.sseLogin(t, nick, "", http.Header{"X-Forwarded-For": {"10.0.0.1"}})
		if status != 200 {
			t.Fatalf("%s's stream: %d %s", nick, status, body)
		}
		streams = append(streams, c)
	}
	if status, body := keptMsg(t, ts, "10.0.0.1"); status != http.StatusTooManyRequests {
		t.Fatalf("a third connection of 10.0.0.1 beside its two streams: %d %q, want 429", status, body)
	}
	streams[0].close()
	ts.waitStreams(t, "bob", -1)
	// Released once the stream's end is done (its leave, then its count).
	for deadline := time.Now().Add(waitFor); ; time.Sleep(10 * time.Millisecond) {
		status, body := keptMsg(t, ts, "10.0.0.1")
		if status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob's stream ended, 10.0.0.1 still refused: %d %q", status, body)
		}
	}
	streams[1].close()
}

// TestIPv6ClientsByPrefix: the per-address limits count an IPv6 client by
// its /64 (issue 49, item 7): two addresses of one /64 share the limits
// of one client, another /64 has its own; with IPv6Prefix 128 each address
// counts apart.
func TestIPv6ClientsByPrefix(t *testing.T) {
	proxy := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	ts, _ := serveOn(t, Options{LeaveGrace: -1, MaxConnsPerAddr: 1, TrustedProxies: proxy})
	login := func(ts *testServer, nick, from string) (int, string) {
		status, body, _, c := ts.sseLogin(t, nick, "", http.Header{"X-Forwarded-For": {from}})
		if c != nil {
			t.Cleanup(c.close)
		}
		return status, body
	}
	if status, body := login(ts, "bob", "2001:db8:1:2::1"); status != 200 {
		t.Fatalf("a stream of 2001:db8:1:2::1: %d %s", status, body)
	}
	if status, body := login(ts, "carol", "2001:db8:1:2:ffff::9"); status != http.StatusTooManyRequests || !strings.Contains(body, "2001:db8:1:2::") {
		t.Fatalf("a stream of another address of the same /64: %d %q, want 429 naming the /64", status, body)
	}
	if status, body := login(ts, "dave", "2001:db8:1:3::1"); status != 200 {
		t.Fatalf("a stream of another /64: %d %s", status, body)
	}

	ts2, _ := serveOn(t, Options{LeaveGrace: -1, MaxConnsPerAddr: 1, TrustedProxies: proxy, IPv6Prefix: 128})
	for i, from := range []string{"2001:db8:1:2::1", "2001:db8:1:2::2"} {
		if status, body := login(ts2, fmt.Sprint("u", i), from); status != 200 {
			t.Fatalf("IPv6Prefix 128, a stream of %s: %d %s", from, status, body)
		}
	}
	if _, err := New(Options{IPv6Prefix: 8}); err == nil || !strings.Contains(err.Error(), "16 to 128") {
		t.Fatalf("IPv6Prefix 8: %v, want refused naming what is allowed", err)
	}
}
