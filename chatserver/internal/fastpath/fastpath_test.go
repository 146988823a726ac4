package fastpath

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/nbio"
	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// waitFor bounds every wait of the tests.
const waitFor = 10 * time.Second

// testPage is the page testApp answers: its head, then its body.
var testPage = []byte("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npage")

const testPageHead = len("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n")

// testApp answers every page request with testPage and sends every post
// but those to "nobody", which it refuses (net/http then answers them).
type testApp struct {
	mu   sync.Mutex
	sent []string // the targets sent
}

func (a *testApp) Page(r *Request) ([]byte, int) { return testPage, testPageHead }

// Send answers on a goroutine of its own, as a store's syncer does.
func (a *testApp) Send(r *Request, answer func(Reply)) bool {
	if strings.HasPrefix(string(r.Target), "/msg/nobody/") {
		return false
	}
	a.mu.Lock()
	a.sent = append(a.sent, string(r.Target))
	a.mu.Unlock()
	go answer(Reply{Status: http.StatusOK, Text: "ok"})
	return true
}

// served is a Listener with net/http behind it, whose handler answers
// "net/http <path>"; stop closes both.
type served struct {
	l    *Listener
	app  *testApp
	addr string
}

func serve(t *testing.T, o Options) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if o.Hosts == nil {
		o.Hosts = httpguard.NewHosts(ln.Addr().String(), nil)
	}
	app := &testApp{}
	l := NewListener(ln, app, o)
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "net/http "+r.URL.Path)
		}),
		ReadHeaderTimeout: o.HeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
	}
	done := make(chan struct{})
	go func() { hs.Serve(l); close(done) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		hs.Shutdown(ctx)
		l.Close()
		l.Wait()
		<-done
	})
	return &served{l: l, app: app, addr: ln.Addr().String()}
}

// rawConn is one client connection that writes raw requests and reads answers.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, addr string) *rawConn {
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
func (rc *rawConn) answer(method string) (*http.Response, string) {
	rc.t.Helper()
	resp, err := http.ReadResponse(rc.br, &http.Request{Method: method})
	if err != nil {
		rc.t.Fatalf("read answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		rc.t.Fatalf("read body: %v", err)
	}
	return resp, string(body)
}

// closed reports whether the server closed the connection (after the answers read).
func (rc *rawConn) closed() bool {
	_, err := rc.br.ReadByte()
	return errors.Is(err, io.EOF)
}

// TestAnsweredHereOrHandedOver: the page and sends are answered here, in
// order with what net/http answers on the same connection from the first
// request it is handed on.
func TestAnsweredHereOrHandedOver(t *testing.T) {
	s := serve(t, Options{HeaderTimeout: waitFor, IdleTimeout: waitFor})
	rc := dial(t, s.addr)
	rc.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n" +
		"GET /msg/mary/john%20hi HTTP/1.1\r\nHost: localhost\r\n\r\n" +
		"HEAD / HTTP/1.1\r\nHost: localhost\r\n\r\n" +
		"GET /msg/nobody/john%20hi HTTP/1.1\r\nHost: localhost\r\n\r\n" +
		"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	for i, want := range []struct{ method, body string }{
		{"GET", "page"}, {"GET", "ok\n"}, {"HEAD", ""}, {"GET", "net/http /msg/nobody/john hi"}, {"GET", "net/http /"},
	} {
		if resp, body := rc.answer(want.method); resp.StatusCode != 200 || body != want.body {
			t.Fatalf("answer %d: %s %q, want 200 %q", i+1, resp.Status, body, want.body)
		}
	}
	if !rc.closed() {
		t.Error("the connection stayed open after Connection: close")
	}
	if got := s.app.sent; !slices.Equal(got, []string{"/msg/mary/john%20hi"}) {
		t.Errorf("sent %q", got)
	}
}

// TestPageAnsweredAtOnce: a page request or a send that closes its
// connection and is there when the connection is accepted is answered
// without a goroutine of its own: the page on the accepting goroutine, the
// send by whoever stores it (App.Send's answer). A keep-alive one, or a
// send refused before sending, is left to serve with the bytes read. The
// same for a connection accepted as an nbio.Socket (Linux) and as a
// net.Conn; either way it is no longer counted once closed.
func TestPageAnsweredAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	raw := make(chan *nbio.Socket)
	rawErr := make(chan error, 1)
	if a, err := nbio.NewAcceptor(ln); err != nil {
		rawErr <- err
	} else {
		defer a.Close()
		go func() { rawErr <- a.AcceptEach(func(s *nbio.Socket) { raw <- s }) }()
	}
	kinds := map[string]func() socket{
		"nbio.Socket": func() socket {
			select {
			case s := <-raw:
				return s
			case err := <-rawErr:
				if errors.Is(err, errors.ErrUnsupported) {
					t.Skip("no nbio.Socket on this system")
				}
				t.Fatal(err)
			}
			return nil
		},
	}
	for kind, accept := range kinds {
		t.Run(kind, func(t *testing.T) { answeredAtOnce(t, ln.Addr().String(), accept) })
	}
	connLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer connLn.Close()
	t.Run("net.Conn", func(t *testing.T) {
		answeredAtOnce(t, connLn.Addr().String(), func() socket {
			c, err := connLn.Accept()
			if err != nil {
				t.Fatal(err)
			}
			return connSocket{c}
		})
	})
}

func answeredAtOnce(t *testing.T, addr string, accept func() socket) {
	l := &Listener{app: &testApp{}, hosts: httpguard.NewHosts(addr, nil), conns: map[net.Conn]struct{}{},
		maxPerAddr: 100, perAddr: map[netip.Addr]int{}}
	for _, c := range []struct {
		req  string
		done bool
		full bool // the socket's buffer already full: the answer is written on a goroutine
	}{
		{"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n", true, false},
		{"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n", true, true},
		{"HEAD / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", true, false},
		{"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", false, false},
		{"GET /john HTTP/1.0\r\nHost: localhost\r\n\r\n", false, false},
		{"GET /msg/mary/john%20hi HTTP/1.0\r\nHost: localhost\r\n\r\n", true, false},
		{"GET /msg/mary/john%20hi HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", true, true},
		{"GET /msg/mary/john%20hi HTTP/1.1\r\nHost: localhost\r\n\r\n", false, false},
		{"GET /msg/nobody/john%20hi HTTP/1.0\r\nHost: localhost\r\n\r\n", false, false},
	} {
		client := dial(t, addr)
		client.send(c.req) // on loopback, in the server's socket once Write returns
		sock := accept()
		filler := 0
		for c.full {
			n, wouldBlock, err := sock.WriteNow(make([]byte, 64<<10))
			if err != nil {
				t.Fatal(err)
			}
			filler += n
			if wouldBlock {
				break
			}
		}
		peer := sock.Peer().Addr()
		l.perAddr[peer]++ // as accepted counts it
		l.serving.Add(1)
		buf := make([]byte, MaxRequest)
		n, done := l.answerAtOnce(sock, buf)
		if done != c.done {
			t.Fatalf("%q: answered at once %v, want %v", c.req, done, c.done)
		}
		if !done {
			if n != len(c.req) || string(buf[:n]) != c.req {
				t.Fatalf("%q: left %q for serve", c.req, buf[:n])
			}
			l.serving.Done()
			l.finish(sock)
			continue
		}
		if _, err := io.CopyN(io.Discard, client.br, int64(filler)); err != nil {
			t.Fatal(err)
		}
		method, target, _ := strings.Cut(c.req, " ")
		want := "page"
		if strings.HasPrefix(target, "/msg/") {
			want = "ok\n"
		}
		if resp, body := client.answer(method); resp.StatusCode != 200 || method == "GET" && body != want {
			t.Fatalf("%q: %s, %q", c.req, resp.Status, body)
		}
		if !client.closed() {
			t.Fatalf("%q: connection left open", c.req)
		}
		l.serving.Done() // the accept loop's share
		l.serving.Wait()
		l.mu.Lock()
		counted := l.perAddr[peer]
		l.mu.Unlock()
		if counted != 0 {
			t.Fatalf("%q: %s still counts %d open connections", c.req, peer, counted)
		}
	}
}

// FuzzPageRequest: whatever ParseRequest answers itself, net/http reads
// the same way: a GET or HEAD of /, an allowed Host, no body, the same
// keep-alive, protocol and representation fields; or, for a send, a GET of
// the same /msg/ escaped path, without a query or Sec-Fetch-Site. What it
// waits for more of (NeedMore), net/http cannot read yet either: a request
// it reads (with bare LFs, say) is never left to time out.
func FuzzPageRequest(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
		"HEAD / HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: keep-alive, close\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: [::1]:80\r\nAccept-Encoding: br, GZIP;q=0.5\r\nIf-None-Match: W/\"x\"\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nX: \t\r\n\r\n",
		"GET /msg/mary/john%20hello HTTP/1.0\r\nHost: 127.0.0.1:8000\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n",
		"GET /msg/m%41ry/jo~hn%2f%20a.b_c-d HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
		"GET /msg/mary/john%20hi HTTP/1.1\r\nHost: localhost\r\nSec-Fetch-Site: none\r\n\r\n",
		// Bare LFs, which net/http reads, and heads cut short.
		"GET / HTTP/1.1\nHost: localhost\n\n",
		"GET / HTTP/1.1\r\nHost: localhost\n\r\n",
		"GET /msg/mary/john%20hi HTTP/1.0\r\nHost: localhost\r\n\n",
		"GET / HTTP/1.1\r\nHost: loc",
		"GET / HTTP/1.1\r\nHost: localhost\r\n\r",
		"HEAD / HT",
	} {
		f.Add([]byte(s))
	}
	hosts := httpguard.NewHosts("127.0.0.1:0", nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		req, v := ParseRequest(b, hosts)
		if v == NeedMore {
			// Waiting is right only for a head net/http could not read yet.
			if len(b) >= MaxRequest {
				t.Fatalf("waits for more of %d bytes, past MaxRequest", len(b))
			}
			if r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b))); err == nil {
				t.Fatalf("waits for more of %q, which net/http reads whole (%s %s)", b, r.Method, r.URL)
			}
			return
		}
		if v != Serve && v != Send {
			return
		}
		r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b[:req.Length])))
		if err != nil {
			t.Fatalf("answered %q, which net/http refuses: %v", b[:req.Length], err)
		}
		if r.Close != req.CloseAfter || r.Proto != req.Form.Proto() {
			t.Fatalf("answered %q: closes after %v in %s, net/http %v in %s", b[:req.Length], req.CloseAfter, req.Form.Proto(), r.Close, r.Proto)
		}
		if !hosts.Allowed(r.Host) || r.ContentLength > 0 || len(r.TransferEncoding) > 0 {
			t.Fatalf("answered %q: net/http reads Host %q, length %d", b[:req.Length], r.Host, r.ContentLength)
		}
		if v == Send {
			if r.Method != "GET" || r.URL.EscapedPath() != string(req.Target) || r.URL.RawQuery != "" ||
				!strings.HasPrefix(r.URL.Path, "/msg/") || len(r.Header["Sec-Fetch-Site"]) > 0 {
				t.Fatalf("sends %q (target %q): net/http reads %s %s, Sec-Fetch-Site %q", b[:req.Length], req.Target, r.Method, r.URL, r.Header["Sec-Fetch-Site"])
			}
			return
		}
		if r.Method != "GET" && r.Method != "HEAD" || r.URL.Path != "/" || r.URL.RawQuery != "" || (r.Method == "HEAD") != req.Head {
			t.Fatalf("answered %q: net/http reads %s %s", b[:req.Length], r.Method, r.URL)
		}
		if !slices.Equal(r.Header["Accept-Encoding"], req.AcceptEncoding) || !slices.Equal(r.Header["If-None-Match"], req.IfNoneMatch) {
			t.Fatalf("answered %q: Accept-Encoding %q and If-None-Match %q, net/http reads %q and %q",
				b[:req.Length], req.AcceptEncoding, req.IfNoneMatch, r.Header["Accept-Encoding"], r.Header["If-None-Match"])
		}
	})
}

// TestHeaderDeadlineBoundsWholeHead: HeaderTimeout bounds a head from its
// first byte to its end: a client sending a byte now and then (slowloris)
// is cut once it has run out, on a connection's first request and on a
// later one alike, however often it sends.
func TestHeaderDeadlineBoundsWholeHead(t *testing.T) {
	const timeout = 1500 * time.Millisecond // above a second: the idle deadline's refresh
	s := serve(t, Options{HeaderTimeout: timeout, IdleTimeout: waitFor})
	for _, first := range []string{"", "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"} {
		rc := dial(t, s.addr)
		if first != "" {
			rc.send(first)
			if resp, body := rc.answer("GET"); resp.StatusCode != 200 || body != "page" {
				t.Fatalf("first request: %s %q", resp.Status, body)
			}
		}
		rc.send("GET / HTTP/1.1\r\nHost: localhost\r\n")
		cut := make(chan time.Duration, 1)
		start := time.Now()
		go func() {
			var b [1]byte
			_, err := rc.c.Read(b[:]) // nothing is answered: the head never ends
			if err == nil {
				t.Errorf("an answer to a head that never ended")
			}
			cut <- time.Since(start)
		}()
		drip := time.NewTicker(100 * time.Millisecond)
	dripping:
		for {
			select {
			case took := <-cut:
				t.Logf("after %q: cut %v after its head began (HeaderTimeout %v)", first, took.Round(time.Millisecond), timeout)
				break dripping
			case <-drip.C:
				if time.Since(start) > waitFor-time.Second {
					t.Fatalf("after %q: a head trickling in for %v still holds its connection (HeaderTimeout %v)", first, time.Since(start), timeout)
				}
				rc.c.Write([]byte("X")) // one byte of a field name, every 100 ms
			}
		}
		drip.Stop()
	}
}

// TestBareLF: a request whose lines end in LF alone, which net/http
// reads, goes to net/http at once instead of waiting for a CRLF.
func TestBareLF(t *testing.T) {
	s := serve(t, Options{HeaderTimeout: time.Minute, IdleTimeout: time.Minute})
	for _, c := range []struct{ req, body string }{
		{"GET / HTTP/1.1\nHost: localhost\n\n", "net/http /"},
		{"GET / HTTP/1.1\r\nHost: localhost\n\r\n", "net/http /"},
		{"GET / HTTP/1.1\r\nHost: localhost\r\nAccept: */*\n\n", "net/http /"},
		{"GET /msg/mary/john%20hi HTTP/1.0\nHost: localhost\n\n", "net/http /msg/mary/john hi"},
		// A bare LF after the head is the next request's business.
		{"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n\n", "page"},
	} {
		rc := dial(t, s.addr) // its deadline (waitFor) is shorter than HeaderTimeout
		rc.send(c.req)
		if resp, body := rc.answer("GET"); resp.StatusCode != 200 || body != c.body {
			t.Errorf("%q: %s %q, want 200 %q", c.req, resp.Status, body, c.body)
		}
	}
}

// TestConnsPerAddr: one client address has at most MaxConnsPerAddr
// connections open, those served here and those net/http serves alike; one
// more is answered 429, saying why, and closed; once one closes, another
// is taken.
func TestConnsPerAddr(t *testing.T) {
	s := serve(t, Options{HeaderTimeout: waitFor, IdleTimeout: waitFor, MaxConnsPerAddr: 3})
	var open []*rawConn
	for i, req := range []string{
		"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",    // kept open by the fast path
		"GET /x HTTP/1.1\r\nHost: localhost\r\n\r\n",   // kept open by net/http
		"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", // net/http's too
	} {
		rc := dial(t, s.addr)
		rc.send(req)
		if resp, _ := rc.answer("GET"); resp.StatusCode != 200 {
			t.Fatalf("connection %d: %s", i+1, resp.Status)
		}
		open = append(open, rc)
	}
	rc := dial(t, s.addr)
	rc.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, body := rc.answer("GET")
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "too many connections from 127.0.0.1: 3 are open") || !rc.closed() {
		t.Fatalf("a fourth connection: %s %q", resp.Status, body)
	}
	open[1].c.Close() // net/http's: counted out when net/http closes it
	for deadline := time.Now().Add(waitFor); ; {
		rc := dial(t, s.addr)
		rc.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
		resp, _ := rc.answer("GET")
		if resp.StatusCode == 200 {
			break
		}
		rc.c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("a connection closed, another still refused: %s", resp.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConnsPerKey: with Options.Key, connections are counted under their
// peer's key (an IPv6 address's network), and a refusal names it.
func TestConnsPerKey(t *testing.T) {
	net64 := netip.MustParseAddr("2001:db8:1:2::")
	s := serve(t, Options{HeaderTimeout: waitFor, IdleTimeout: waitFor, MaxConnsPerAddr: 1,
		Key: func(netip.Addr) netip.Addr { return net64 }})
	rc := dial(t, s.addr)
	rc.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	if resp, _ := rc.answer("GET"); resp.StatusCode != 200 {
		t.Fatalf("first connection: %s", resp.Status)
	}
	rc2 := dial(t, s.addr)
	rc2.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	if resp, body := rc2.answer("GET"); resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "from 2001:db8:1:2::") {
		t.Fatalf("a second connection under the same key: %s %q, want 429 naming the key", resp.Status, body)
	}
}

// TestLocalhostPairAcceptsSockets: the two listeners of "localhost" are
// each accepted from as bare sockets (on Linux) and answer a plain
// request at once, on 127.0.0.1 and on ::1 alike; their pair's own
// accepting goroutines never start.
func TestLocalhostPairAcceptsSockets(t *testing.T) {
	ln, err := Listen("localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	m, ok := ln.(*multiListener)
	if !ok {
		ln.Close()
		t.Skip("no IPv6 loopback here: localhost is 127.0.0.1 alone")
	}
	app := &testApp{}
	l := NewListener(ln, app, Options{Hosts: httpguard.NewHosts(ln.Addr().String(), nil), HeaderTimeout: waitFor})
	defer func() { l.Close(); l.Wait() }()
	if _, err := nbio.NewAcceptor(m.lns[0]); errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no nbio.Acceptor on this system")
	}
	if len(l.acceptors) != 2 {
		t.Fatalf("%d acceptors for localhost's two listeners", len(l.acceptors))
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for _, host := range []string{"127.0.0.1", "::1"} {
		rc := dial(t, net.JoinHostPort(host, port))
		rc.send("GET /msg/mary/john%20hi HTTP/1.0\r\nHost: localhost\r\n\r\n")
		if resp, body := rc.answer("GET"); resp.StatusCode != 200 || body != "ok\n" {
			t.Fatalf("%s: %s %q", host, resp.Status, body)
		}
		if !rc.closed() {
			t.Fatalf("%s: connection left open", host)
		}
	}
	select {
	case c := <-m.conns:
		t.Fatalf("the pair's own goroutines accepted %v", c.RemoteAddr())
	default:
	}
}
