package chatserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/fastpath"
	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// rawAnswer reads the next answer's bytes as they came (head and a body of
// its Content-Length, none for HEAD).
func (rc *rawConn) rawAnswer(method string) string {
	rc.t.Helper()
	var b strings.Builder
	length := -1
	for {
		line, err := rc.br.ReadString('\n')
		if err != nil {
			rc.t.Fatalf("read answer: %v (so far %q)", err, b.String())
		}
		b.WriteString(line)
		if line == "\r\n" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if length < 0 { // net/http's answer to a malformed request: until the end
		rest, _ := io.ReadAll(rc.br)
		return b.String() + string(rest)
	}
	if method == "HEAD" {
		length = 0
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(rc.br, body); err != nil {
		rc.t.Fatalf("read body: %v", err)
	}
	b.Write(body)
	return b.String()
}

var dateLine = regexp.MustCompile(`\r\nDate: [^\r]*\r\n`)

// withoutDate is an answer with its Date's value blanked (the two servers
// answer in different seconds, sometimes).
func withoutDate(answer string) string {
	return dateLine.ReplaceAllString(answer, "\r\nDate: -\r\n")
}

// msgServers are a chat served with Serve (GET /msg/... sent before
// net/http) and a chat with the same Options served by net/http alone.
func msgServers(t *testing.T, o Options) (fast, slow *testServer) {
	t.Helper()
	o.LeaveGrace = -1
	fast, _ = serveOn(t, o)
	o.DataDir = t.TempDir()
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	// The same Host check, whose refusal names the address: fast's.
	hs := httptest.NewServer(httpguard.NewHosts(fast.hostPort(), nil).Handler(srv.Handler()))
	t.Cleanup(func() { hs.Close(); srv.Shutdown(context.Background()) })
	return fast, &testServer{srv: srv, hs: hs, url: hs.URL, dir: o.DataDir}
}

// msgCase is one request and what fastpath.ParseRequest and fastSide make
// of it: sent here, or handed to net/http.
type msgCase struct {
	req  string
	sent bool // answered by the fast path
	// sameDigits: the answers are compared with their numbers and the rate
	// limit's wait blanked (it differs by milliseconds).
	sameDigits bool
}

// sendsHere reports whether the fast path sends raw's post itself.
func sendsHere(srv *Server, raw string) bool {
	req, v := fastpath.ParseRequest([]byte(raw), httpguard.NewHosts("127.0.0.1:0", nil))
	if v != fastpath.Send {
		return false
	}
	_, _, err := srv.msgPost(string(req.Target))
	return err == nil
}

// compareMsgAnswers sends each case to both servers, in order, each on a
// connection of its own, and compares the answers byte for byte but Date.
func compareMsgAnswers(t *testing.T, fast, slow *testServer, cases []msgCase) {
	t.Helper()
	digits, wait := regexp.MustCompile(`[0-9]+`), regexp.MustCompile(`retry in [^\n]*`)
	for _, c := range cases {
		if got := sendsHere(fast.srv, c.req); got != c.sent {
			t.Fatalf("%q: sent by the fast path %v, want %v", c.req, got, c.sent)
		}
		var answers [2]string
		for i, ts := range []*testServer{fast, slow} {
			rc := dialPage(t, ts.hostPort())
			rc.send(c.req)
			method, _, _ := strings.Cut(c.req, " ")
			answer := rc.rawAnswer(method)
			if c.sent && len(dateLine.FindAllString(answer, -1)) != 1 {
				t.Errorf("%q: answer without one Date: %q", c.req, answer)
			}
			answers[i] = withoutDate(answer)
		}
		f, s := answers[0], answers[1]
		if c.sameDigits {
			if f[:12] != s[:12] {
				t.Errorf("%q: status\n fast     %q\n net/http %q", c.req, f, s)
			}
			f, s = wait.ReplaceAllString(f, "retry in W"), wait.ReplaceAllString(s, "retry in W")
			f, s = digits.ReplaceAllString(f, "N"), digits.ReplaceAllString(s, "N")
		}
		if f != s {
			t.Errorf("%q:\n fast     %q\n net/http %q", c.req, f, s)
		}
	}
}

// TestMsgFastSameAsNetHTTP: the fast path's answers to GET /msg/... are
// net/http's, byte for byte but Date, for each outcome of a send and each
// form of request; the requests refused before sending are handed over
// and get net/http's answer.
func TestMsgFastSameAsNetHTTP(t *testing.T) {
	fast, slow := msgServers(t, Options{MaxMailbox: 1, MaxMailboxes: 2, MaxMessageBytes: 100})
	var johns []*client
	for _, ts := range []*testServer{fast, slow} {
		john := ts.login(t, "sse", "john")
		john.expect("Welcome john!", "now online: ")
		johns = append(johns, john)
	}
	const host = "\r\nHost: 127.0.0.1\r\n"
	cases := []msgCase{
		{req: "GET /msg/mary/john%20hello HTTP/1.1" + host + "\r\n", sent: true},
		{req: "GET /msg/mary/john%20hello%2C%20again HTTP/1.0" + host + "\r\n", sent: true},
		{req: "GET /msg/mary/john%20keep HTTP/1.0" + host + "Connection: keep-alive\r\n\r\n", sent: true},
		{req: "GET /msg/mary/john%20close HTTP/1.1" + host + "Connection: close\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n", sent: true},
		{req: "GET /msg/mary/all%20hi%20all HTTP/1.1" + host + "\r\n", sent: true},
		// Offline receivers: kept (ok), the mailbox full (409), too many mailboxes (507).
		{req: "GET /msg/mary/bob%20later HTTP/1.1" + host + "\r\n", sent: true},
		{req: "GET /msg/mary/bob%20later%20again HTTP/1.1" + host + "\r\n", sent: true},
		{req: "GET /msg/mary/carol%20later HTTP/1.1" + host + "\r\n", sent: true},
		{req: "GET /msg/mary/dave%20later HTTP/1.1" + host + "Connection: close\r\n\r\n", sent: true},
		// Refused before sending, or not plain: net/http's.
		{req: "GET /msg/mary/john%20hi HTTP/1.1" + host + "Sec-Fetch-Site: cross-site\r\n\r\n"},
		{req: "GET /msg/mary/john%20hi HTTP/1.1" + host + "Sec-Fetch-Site: same-origin\r\n\r\n"},
		{req: "GET /msg/mary/john HTTP/1.1" + host + "\r\n"},
		{req: "GET /msg/ma%20ry/john%20hi HTTP/1.1" + host + "\r\n"},
		{req: "GET /msg/mary/john%20hi%zz HTTP/1.1" + host + "\r\n"},
		{req: "GET /msg/mary/john%20" + strings.Repeat("x", 101) + " HTTP/1.1" + host + "\r\n"},
		{req: "GET /msg/mary/john%20hi?x=1 HTTP/1.1" + host + "\r\n"},
		{req: "HEAD /msg/mary/john%20hi HTTP/1.1" + host + "\r\n"},
		{req: "GET /msg/mary/john%20hi HTTP/1.1\r\nHost: evil.example\r\n\r\n"},
	}
	compareMsgAnswers(t, fast, slow, cases)
	for _, john := range johns {
		john.expect("mary: hello", "mary: hello, again", "mary: keep", "mary: close", "mary to all: hi all",
			"mary: hi", "mary: hi") // sent by net/http: Sec-Fetch-Site same-origin, a query
		john.quiet()
	}
}

// TestMsgFastRateLimited: a send over its sender's rate gets net/http's
// 429, Retry-After and text.
func TestMsgFastRateLimited(t *testing.T) {
	fast, slow := msgServers(t, Options{SendRate: 0.001, SendBurst: 1})
	const req = "GET /msg/mary/bob%20hi HTTP/1.1\r\nHost: localhost\r\n\r\n"
	compareMsgAnswers(t, fast, slow, []msgCase{
		{req: req, sent: true},
		{req: req, sent: true, sameDigits: true},
		{req: strings.Replace(req, "HTTP/1.1", "HTTP/1.0", 1), sent: true, sameDigits: true},
	})
}

// TestMsgFastPipelining: sends and pages pipelined on one connection are
// answered in order, the fast path's first, then net/http's from the
// first request it hands over on (a cross-site send here); every
// acknowledged post reaches its receiver once.
func TestMsgFastPipelining(t *testing.T) {
	ts, _ := serveOn(t, Options{LeaveGrace: -1})
	john := ts.login(t, "sse", "john")
	john.expect("Welcome john!", "now online: ")
	rc := dialPage(t, ts.hostPort())
	rc.send("GET /msg/mary/john%201 HTTP/1.1\r\nHost: localhost\r\n\r\n" +
		"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n" +
		"GET /msg/mary/john%202 HTTP/1.0\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n" +
		"GET /msg/mary/john%203 HTTP/1.1\r\nHost: localhost\r\nSec-Fetch-Site: cross-site\r\n\r\n" +
		"GET /msg/mary/john%204 HTTP/1.1\r\nHost: localhost\r\n\r\n" +
		"GET /msg/mary/john%205 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	for i, want := range []int{200, 200, 200, 403, 200, 200} {
		if resp, body := rc.answer("GET"); resp.StatusCode != want {
			t.Fatalf("answer %d: %s %s, want %d", i+1, resp.Status, body, want)
		}
	}
	if !rc.closed() {
		t.Error("the connection stayed open after Connection: close")
	}
	john.expect("mary: 1", "mary: 2", "mary: 4", "mary: 5")
	john.quiet()

	// Keep-alive: several sends on one connection, then one in pieces.
	rc = dialPage(t, ts.hostPort())
	for i := range 3 {
		rc.send(fmt.Sprintf("GET /msg/mary/john%%20k%d HTTP/1.1\r\nHost: localhost\r\n\r\n", i))
		if resp, body := rc.answer("GET"); resp.StatusCode != 200 || string(body) != "ok\n" {
			t.Fatalf("keep-alive send %d: %s %q", i, resp.Status, body)
		}
	}
	for _, piece := range []string{"GET /m", "sg/mary/jo", "hn%20pieces HTTP/1.1\r\nHo", "st: localhost\r\n\r", "\n"} {
		rc.send(piece)
	}
	if resp, body := rc.answer("GET"); resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Fatalf("send in pieces: %s %q", resp.Status, body)
	}
	john.expect("mary: k0", "mary: k1", "mary: k2", "mary: pieces")
	john.quiet()
}

// TestMsgFastAllDelivered: many clients sending at once, as ab does (a
// connection per request, HTTP/1.0) and with keep-alive: every
// acknowledged post reaches the receiver's event stream, once.
func TestMsgFastAllDelivered(t *testing.T) {
	ts, _ := serveOn(t, Options{LeaveGrace: -1})
	john := ts.login(t, "sse", "john")
	john.expect("Welcome john!", "now online: ")
	const clients, each = 8, 40
	var wg sync.WaitGroup
	acked := make(chan string, clients*each)
	for c := range clients {
		wg.Go(func() {
			var rc *rawConn
			for i := range each {
				text := fmt.Sprintf("c%d-%d", c, i)
				keepAlive := c%2 == 1
				if rc == nil || !keepAlive {
					rc = dialPage(t, ts.hostPort())
				}
				if keepAlive {
					rc.send("GET /msg/mary/john%20" + text + " HTTP/1.1\r\nHost: localhost\r\n\r\n")
				} else {
					rc.send("GET /msg/mary/john%20" + text + " HTTP/1.0\r\nHost: localhost\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n")
				}
				resp, err := readAnswer(rc.br)
				if err != nil {
					t.Errorf("%s: %v", text, err)
					return
				}
				if resp == "ok\n" {
					acked <- "mary: " + text
				}
			}
		})
	}
	wg.Wait()
	close(acked)
	want := map[string]bool{}
	for text := range acked {
		want[text] = true
	}
	if len(want) != clients*each {
		t.Errorf("%d of %d sends acknowledged", len(want), clients*each)
	}
	for range len(want) {
		e := john.next()
		if !want[e.text] {
			t.Fatalf("unexpected or repeated event %q", e.text)
		}
		delete(want, e.text)
	}
	john.quiet()
}

// readAnswer reads an answer's body (safe from several goroutines: no t.Fatal).
func readAnswer(br *bufio.Reader) (string, error) {
	length := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		if line == "\r\n" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	body := make([]byte, max(length, 0))
	_, err := io.ReadFull(br, body)
	return string(body), err
}

// TestMsgFastWaitsWithoutGoroutines: sends as ab makes them (HTTP/1.0, a
// connection each) wait for their store commit without a goroutine each:
// while the hub is held, 200 of them are taken and queued, and the
// server's goroutines stay about as many as before (a goroutine per send
// would add 200); once the hub goes on, every one is answered.
func TestMsgFastWaitsWithoutGoroutines(t *testing.T) {
	ln, err := Listen("127.0.0.1:0") // as the command listens: accepted once the request is there
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := serveOnListener(t, Options{LeaveGrace: -1}, ln)
	held, release := make(chan struct{}), make(chan struct{})
	// Handled at once by the caller when the hub is idle: on a goroutine of its own.
	go ts.srv.localHub().submit(context.Background(), &inspectReq{fn: func(*hub) { close(held); <-release }})
	<-held
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	before := runtime.NumGoroutine()
	const sends = 200
	conns := make([]*rawConn, sends)
	for i := range conns {
		conns[i] = dialPage(t, ts.hostPort())
		conns[i].send(fmt.Sprintf("GET /msg/mary/john%%20m%d HTTP/1.0\r\nHost: localhost\r\n\r\n", i))
	}
	// Queued counts the sends handed to the hub and not yet handled, the one its
	// goroutine may hold while it waits for the hub's lock included.
	deadline := time.Now().Add(waitFor)
	for ts.srv.localHub().queued.Load() < sends {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d sends reached the hub's queue", ts.srv.localHub().queued.Load(), sends)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if grown := runtime.NumGoroutine() - before; grown > sends/4 {
		t.Errorf("%d sends waiting for the hub added %d goroutines, want none for each", sends, grown)
	}
	close(release)
	released = true
	for i, rc := range conns {
		if body, err := readAnswer(rc.br); err != nil || body != "ok\n" {
			t.Fatalf("send %d: %q, %v", i, body, err)
		}
	}
}
