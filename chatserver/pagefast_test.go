package chatserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/fastpath"
	"github.com/wasmgap/wasmgap/chatserver/internal/page"
	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// hostPort is the server's address, host:port.
func (ts *testServer) hostPort() string { return strings.TrimPrefix(ts.url, "http://") }

// rawConn is one client connection that writes raw requests and reads answers.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialPage(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(waitFor))
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

func (rc *rawConn) send(raw string) {
	rc.t.Helper()
	if _, err := rc.c.Write([]byte(raw)); err != nil {
		rc.t.Fatal(err)
	}
}

// answer reads the next answer, to a request of method.
func (rc *rawConn) answer(method string) (*http.Response, []byte) {
	rc.t.Helper()
	resp, err := http.ReadResponse(rc.br, &http.Request{Method: method})
	if err != nil {
		rc.t.Fatalf("read answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		rc.t.Fatalf("read body: %v", err)
	}
	return resp, body
}

// closed reports whether the server closed the connection (after the answers read).
func (rc *rawConn) closed() bool {
	_, err := rc.br.ReadByte()
	return errors.Is(err, io.EOF)
}

// TestPageFastSameAsNetHTTP: every plain page request answered by
// the fast path gets the same status, headers (but Date) and body as
// net/http's handler gives it.
func TestPageFastSameAsNetHTTP(t *testing.T) {
	ts, _ := serveOn(t, Options{LeaveGrace: -1})
	fast := ts.hostPort()
	srv, err := New(Options{DataDir: t.TempDir(), LeaveGrace: -1})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(httpguard.NewHosts("127.0.0.1:0", nil).Handler(srv.Handler()))
	t.Cleanup(func() { hs.Close(); srv.Shutdown(context.Background()) })
	slow := strings.TrimPrefix(hs.URL, "http://")

	plain, gz := page.ETag(false), page.ETag(true)
	for _, raw := range []string{
		"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nAccept-Encoding: gzip, deflate, br\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip;q=0, identity\r\n\r\n",
		"HEAD / HTTP/1.1\r\nHost: localhost\r\n\r\n",
		"HEAD / HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: " + plain + "\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: \"other\", W/" + plain + "\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: *\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: " + gz + "\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\nIf-None-Match: " + gz + "\r\n\r\n",
		"HEAD / HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: " + plain + "\r\n\r\n",
		"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n",
		"GET / HTTP/1.0\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
		"HEAD / HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n",
		"GET / HTTP/1.1\r\nhost: LOCALHOST\r\nUser-Agent: wrk\r\nContent-Length: 0\r\n\r\n",
	} {
		if _, v := fastpath.ParseRequest([]byte(raw), httpguard.NewHosts("127.0.0.1:0", nil)); v != fastpath.Serve {
			t.Fatalf("%q is not answered by the fast path (verdict %d)", raw, v)
		}
		method, _, _ := strings.Cut(raw, " ")
		var got [2]*http.Response
		var bodies [2][]byte
		for i, addr := range []string{fast, slow} {
			rc := dialPage(t, addr)
			rc.send(raw)
			got[i], bodies[i] = rc.answer(method)
			if _, err := http.ParseTime(got[i].Header.Get("Date")); err != nil {
				t.Errorf("%q: Date %q: %v", raw, got[i].Header.Get("Date"), err)
			}
			got[i].Header.Del("Date")
		}
		f, s := got[0], got[1]
		if f.StatusCode != s.StatusCode || f.Close != s.Close || !bytes.Equal(bodies[0], bodies[1]) || f.ContentLength != s.ContentLength {
			t.Errorf("%q:\n fast %s close=%v length %d body %d bytes\n net/http %s close=%v length %d body %d bytes",
				raw, f.Status, f.Close, f.ContentLength, len(bodies[0]), s.Status, s.Close, s.ContentLength, len(bodies[1]))
		}
		fh, sh := f.Header.Clone(), s.Header.Clone()
		if fh.Get("Connection") != sh.Get("Connection") {
			t.Errorf("%q: Connection %q, net/http %q", raw, fh.Get("Connection"), sh.Get("Connection"))
		}
		if !equalHeaders(fh, sh) {
			t.Errorf("%q: headers\n fast     %v\n net/http %v", raw, fh, sh)
		}
		if f.StatusCode == 200 && f.Header.Get("Content-Security-Policy") != page.CSP {
			t.Errorf("%q: no Content-Security-Policy", raw)
		}
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\n") != strings.Join(b[k], "\n") {
			return false
		}
	}
	return true
}

// TestPagePipelining: requests pipelined on one connection are answered in
// order, the fast path's first, then net/http's from the first request it
// does not answer itself on; the connection ends as the last one asks.
func TestPagePipelining(t *testing.T) {
	ts, _ := serveOn(t, Options{LeaveGrace: -1})
	addr := ts.hostPort()
	rc := dialPage(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n" +
		"HEAD / HTTP/1.0\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n" +
		"GET /?from=pipeline HTTP/1.1\r\nHost: localhost\r\n\r\n" +
		"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n" +
		"GET /nope HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	for i, want := range []struct {
		method string
		status int
	}{{"GET", 200}, {"HEAD", 200}, {"GET", 200}, {"GET", 200}, {"GET", 404}} {
		resp, body := rc.answer(want.method)
		if resp.StatusCode != want.status {
			t.Fatalf("answer %d: %s, want %d", i+1, resp.Status, want.status)
		}
		if want.status == 200 && want.method == "GET" && !bytes.Equal(body, page.HTML) {
			t.Fatalf("answer %d: not the page", i+1)
		}
	}
	if !rc.closed() {
		t.Error("the connection stayed open after Connection: close")
	}
}

// TestPageKeepAlive: HTTP/1.1 keeps the connection open, HTTP/1.0 only when
// asked; Connection: close and HTTP/1.0 end it after the answer.
func TestPageKeepAlive(t *testing.T) {
	ts, _ := serveOn(t, Options{LeaveGrace: -1})
	addr := ts.hostPort()
	for _, c := range []struct {
		req       string
		keepsOpen bool
	}{
		{"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", true},
		{"GET / HTTP/1.0\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n", true},
		{"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n", false},
		{"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", false},
		{"HEAD / HTTP/1.0\r\nHost: localhost\r\n\r\n", false},
	} {
		rc := dialPage(t, addr)
		method, _, _ := strings.Cut(c.req, " ")
		for range 3 {
			rc.send(c.req)
			if resp, _ := rc.answer(method); resp.StatusCode != 200 {
				t.Fatalf("%q: %s", c.req, resp.Status)
			}
			if !c.keepsOpen {
				break
			}
		}
		if !c.keepsOpen && !rc.closed() {
			t.Errorf("%q: the connection stayed open", c.req)
		}
	}
}

// TestPageRequestInPieces: a request written a few bytes at a time is
// answered once it is complete.
func TestPageRequestInPieces(t *testing.T) {
	ts, _ := serveOn(t, Options{LeaveGrace: -1})
	addr := ts.hostPort()
	rc := dialPage(t, addr)
	for _, piece := range []string{"G", "ET / HT", "TP/1.1\r", "\nHost: local", "host\r\n", "\r", "\n"} {
		rc.send(piece)
		time.Sleep(time.Millisecond) // separate writes, most likely separate reads
	}
	if resp, body := rc.answer("GET"); resp.StatusCode != 200 || !bytes.Equal(body, page.HTML) {
		t.Fatalf("%s, %d bytes", resp.Status, len(body))
	}
}

// TestPageHandedOver: what the fast path does not answer itself reaches
// net/http, which answers it or refuses it as before: a foreign Host (DNS
// rebinding) gets 403, a malformed request 400, other routes work on the
// same connection after a page.
func TestPageHandedOver(t *testing.T) {
	ts, _ := serveOn(t, Options{LeaveGrace: -1})
	addr := ts.hostPort()
	for _, c := range []struct {
		req    string
		status int
	}{
		{"GET / HTTP/1.1\r\nHost: evil.example:8000\r\n\r\n", 403},
		{"GET / HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\n\r\n", 400},
		{"GET / HTTP/1.0\r\n\r\n", 403},
		{"GET / HTTP/1.1\r\nHost: localhost\r\nX-Folded: a\r\n b\r\n\r\n", 200},
		{"GET / HTTP/1.1\r\nHost: local host\r\n\r\n", 400},
		{"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n", 405},
		{"GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n\r\nabc", 200},
		{"GET / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 200},
		{"GET /?x=1 HTTP/1.1\r\nHost: localhost\r\n\r\n", 200},
		{"GET / HTTP/1.1\r\nHost: localhost\r\nX-Long: " + strings.Repeat("a", 2*fastpath.MaxRequest) + "\r\n\r\n", 200},
		{"GET / HTTP/2.0\r\nHost: localhost\r\n\r\n", 505},
		{"GET /msg/mary/john%20hi HTTP/1.1\r\nHost: localhost\r\n\r\n", 200},
	} {
		rc := dialPage(t, addr)
		rc.send(c.req)
		if resp, body := rc.answer("GET"); resp.StatusCode != c.status {
			t.Errorf("%.60q: %s %.80s, want %d", c.req, resp.Status, body, c.status)
		}
	}
	// A page, then an event stream, on one connection.
	rc := dialPage(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\nGET /john HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n")
	if resp, _ := rc.answer("GET"); resp.StatusCode != 200 {
		t.Fatalf("page: %s", resp.Status)
	}
	resp, err := http.ReadResponse(rc.br, &http.Request{Method: "GET"})
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("event stream after the page: %v %v", resp, err)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream: %v", err)
		}
		if strings.HasPrefix(line, "data: Welcome john!") {
			break
		}
	}
}

// TestPageShutdown: Serve returns while a keep-alive connection served by
// the fast path is idle, and that connection is closed.
func TestPageShutdown(t *testing.T) {
	ts, stop := serveOn(t, Options{LeaveGrace: -1})
	addr := ts.hostPort()
	rc := dialPage(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	if resp, _ := rc.answer("GET"); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	stop() // fails the test if Serve does not return
	if !rc.closed() {
		t.Error("the idle page connection was not closed")
	}
}
