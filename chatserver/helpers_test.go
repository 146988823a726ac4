package chatserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/wasmgap/wasmgap/chatserver/internal/store"
)

// waitFor bounds every wait of the tests.
const waitFor = 10 * time.Second

type testServer struct {
	srv *Server
	hs  *httptest.Server
	url string
	dir string
}

// startServer runs a chat on a loopback port; DataDir defaults to a fresh
// temporary folder and LeaveGrace to none, so "has left." comes at once.
func startServer(t testing.TB, o Options) *testServer {
	t.Helper()
	if o.DataDir == "" {
		o.DataDir = t.TempDir()
	}
	if o.LeaveGrace == 0 {
		o.LeaveGrace = -1
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	ts := &testServer{srv: srv, hs: hs, url: hs.URL, dir: o.DataDir}
	t.Cleanup(ts.stop)
	return ts
}

func (ts *testServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	ts.srv.Shutdown(ctx)
	ts.hs.Close()
}

type ev struct {
	id   uint64
	text string
}

// client is one stream of a user, over SSE or WebSocket.
type client struct {
	t        testing.TB
	ts       *testServer
	nick     string
	kind     string // "sse" or "ws"
	events   chan ev
	comments chan string
	done     chan struct{} // closed when the stream ended
	closeFn  func()
	ws       *websocket.Conn
	wsMu     sync.Mutex
	errs     chan string // {"error"} frames (ws)
	lastID   uint64
	markers  int // quiet markers sent
}

func (ts *testServer) login(t testing.TB, kind, nick string) *client {
	return ts.resume(t, kind, nick, "")
}

// resume logs nick in; last is the resume id ("" for a fresh login).
func (ts *testServer) resume(t testing.TB, kind, nick, last string) *client {
	t.Helper()
	c := &client{t: t, ts: ts, nick: nick, kind: kind, events: make(chan ev, 20000),
		comments: make(chan string, 100), done: make(chan struct{}), errs: make(chan string, 100)}
	switch kind {
	case "sse":
		req, _ := http.NewRequest("GET", ts.url+"/"+nick, nil)
		req.Header.Set("Accept", "text/event-stream")
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("login %s over sse: %s: %s", nick, resp.Status, b)
		}
		if got := resp.Header.Get("X-Accel-Buffering"); got != "no" {
			t.Errorf("X-Accel-Buffering = %q, want no", got)
		}
		c.closeFn = func() { resp.Body.Close() }
		go func() {
			defer close(c.done)
			readSSE(resp.Body, c.events, c.comments)
		}()
	case "ws":
		u := "ws" + strings.TrimPrefix(ts.url, "http") + "/ws?nick=" + url.QueryEscape(nick)
		if last != "" {
			u += "&resume=" + last
		}
		ws, resp, err := websocket.DefaultDialer.Dial(u, nil)
		if err != nil {
			msg := ""
			if resp != nil {
				b, _ := io.ReadAll(resp.Body)
				msg = string(b)
			}
			t.Fatalf("login %s over ws: %v %s", nick, err, msg)
		}
		c.ws = ws
		c.closeFn = func() { ws.Close() }
		go func() {
			defer close(c.done)
			for {
				_, data, err := ws.ReadMessage()
				if err != nil {
					if ce, ok := err.(*websocket.CloseError); ok {
						c.comments <- "close: " + ce.Text
					}
					return
				}
				var m struct {
					ID    uint64 `json:"id"`
					Text  string `json:"text"`
					Error string `json:"error"`
				}
				if err := json.Unmarshal(data, &m); err != nil {
					c.errs <- "bad frame: " + string(data)
					continue
				}
				if m.Error != "" {
					c.errs <- m.Error
					continue
				}
				c.events <- ev{m.ID, m.Text}
			}
		}()
	default:
		t.Fatalf("unknown transport %q", kind)
	}
	t.Cleanup(c.close)
	return c
}

// readSSE parses an event stream until it ends.
func readSSE(r io.Reader, events chan<- ev, comments chan<- string) {
	br := bufio.NewReader(r)
	var cur ev
	var data []string
	hasID := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if data != nil {
				cur.text = strings.Join(data, "\n")
				if !hasID {
					cur.id = 0
				}
				events <- cur
			}
			data, hasID = nil, false
		case strings.HasPrefix(line, ":"):
			select {
			case comments <- strings.TrimSpace(line[1:]):
			default:
			}
		case strings.HasPrefix(line, "id: "):
			cur.id, _ = strconv.ParseUint(line[4:], 10, 64)
			hasID = true
		case strings.HasPrefix(line, "data: "):
			data = append(data, line[6:])
		}
	}
}

func (c *client) close() {
	c.closeFn()
	select {
	case <-c.done:
	case <-time.After(waitFor):
	}
}

// next returns the next event, failing the test after waitFor.
func (c *client) next() ev {
	c.t.Helper()
	select {
	case e := <-c.events:
		if e.id <= c.lastID {
			c.t.Errorf("%s (%s): id %d after %d: ids must grow", c.nick, c.kind, e.id, c.lastID)
		}
		c.lastID = e.id
		return e
	case <-time.After(waitFor):
		c.t.Fatalf("%s (%s): no event within %v", c.nick, c.kind, waitFor)
		return ev{}
	}
}

// expect checks the next events' texts.
func (c *client) expect(texts ...string) {
	c.t.Helper()
	for _, want := range texts {
		if got := c.next(); got.text != want {
			c.t.Fatalf("%s (%s): got %q, want %q", c.nick, c.kind, got.text, want)
		}
	}
}

// quiet checks that no event is waiting for the client: it sends the user a
// private marker message and expects it as the next event, so whatever was
// already on its way arrives first and fails the check, with no timing
// involved. (Every open stream of the user receives the marker.)
func (c *client) quiet() {
	c.t.Helper()
	c.markers++
	text := fmt.Sprintf("marker %d", c.markers)
	if status, body := c.ts.msg(c.t, "quietcheck", c.nick, text); status != 200 {
		c.t.Fatalf("send the quiet marker: %d %s", status, body)
	}
	if got := c.next(); got.text != "quietcheck: "+text {
		c.t.Fatalf("%s (%s): unexpected event %q", c.nick, c.kind, got.text)
	}
}

// send sends as this client's user, the way its transport's page would:
// a WebSocket frame, or a POST /send.
func (c *client) send(to, text string) {
	c.t.Helper()
	if c.kind == "ws" {
		c.wsMu.Lock()
		defer c.wsMu.Unlock()
		if err := c.ws.WriteJSON(map[string]string{"to": to, "text": text}); err != nil {
			c.t.Fatal(err)
		}
		return
	}
	if status, body := c.ts.post(c.t, c.nick, to, text); status != 200 {
		c.t.Fatalf("send: %d %s", status, body)
	}
}

func (ts *testServer) post(t testing.TB, from, to, text string) (int, string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"from": from, "to": to, "text": text})
	return ts.do(t, "POST", "/send", string(b))
}

// msg sends with the article's GET /msg/<from>/<to>%20<text>.
func (ts *testServer) msg(t testing.TB, from, to, text string) (int, string) {
	t.Helper()
	return ts.do(t, "GET", "/msg/"+url.PathEscape(from)+"/"+url.PathEscape(to+" "+text), "")
}

func (ts *testServer) do(t testing.TB, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(bytes.TrimSpace(b))
}

// expectOffline checks the next event is the article's offline delivery
// "<from> (YYYY-MM-DD HH:MM): <text>", sent within the last minutes.
func (c *client) expectOffline(from, text string) {
	c.t.Helper()
	got := c.next().text
	prefix, rest, ok := strings.Cut(got, " (")
	stamp, msg, ok2 := strings.Cut(rest, "): ")
	when, err := time.ParseInLocation("2006-01-02 15:04", stamp, time.Local)
	if !ok || !ok2 || err != nil || prefix != from || msg != text || time.Since(when) > 5*time.Minute || time.Until(when) > time.Minute {
		c.t.Fatalf("%s (%s): got %q, want %q", c.nick, c.kind, got, from+" (<now as YYYY-MM-DD HH:MM>): "+text)
	}
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// streams reports how many open streams nick has (-1: offline).
func (ts *testServer) streams(nick string) int {
	n := -1
	ts.srv.localHub().do(context.Background(), &inspectReq{fn: func(h *hub) {
		if on, open := h.m.Online(nick); on {
			n = open
		}
	}})
	return n
}

// waitStreams waits until nick has n open streams (-1: offline).
func (ts *testServer) waitStreams(t testing.TB, nick string, n int) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for ts.streams(nick) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%s still has %d streams, want %d", nick, ts.streams(nick), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// mailbox reports how many offline messages wait for nick.
func (ts *testServer) mailbox(nick string) int {
	n := 0
	ts.srv.localHub().do(context.Background(), &inspectReq{fn: func(h *hub) { n = h.m.MailCount(nick) }})
	return n
}

// logBytes is where the records of the store's log end (its file is filled
// with zeros past them).
func (ts *testServer) logBytes() int64 {
	var n int64
	ts.srv.localHub().do(context.Background(), &inspectReq{fn: func(h *hub) {
		st, _ := h.store.Stats()
		n = st.LogBytes
	}})
	return n
}

// waitMailbox waits until n offline messages wait for nick.
func (ts *testServer) waitMailbox(t testing.TB, nick string, n int) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for ts.mailbox(nick) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%s's mailbox holds %d messages, want %d", nick, ts.mailbox(nick), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// prune runs the hub's pruning now, on its goroutine.
func (ts *testServer) prune() {
	done := make(chan struct{})
	ts.srv.localHub().pruneNow <- done
	<-done
}

// setClock makes the hub stamp and prune by the returned clock, which the test moves.
func (ts *testServer) setClock() *atomic.Int64 {
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	ts.srv.localHub().do(context.Background(), &inspectReq{fn: func(h *hub) {
		h.now = func() time.Time { return time.Unix(0, now.Load()) }
	}})
	return &now
}

// serveOn runs a Server with Serve (the page answered by pageListener)
// and returns it and stop, which ends Serve and checks that it returned
// nil (also called at the test's end).
func serveOn(t *testing.T, o Options) (ts *testServer, stop func()) {
	t.Helper()
	return serveOnListener(t, o, listen(t))
}

// serveOnListener is serveOn on ln.
func serveOnListener(t *testing.T, o Options, ln net.Listener) (ts *testServer, stop func()) {
	t.Helper()
	if o.DataDir == "" {
		o.DataDir = t.TempDir()
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(waitFor):
				t.Error("Serve did not return")
			}
		})
	}
	t.Cleanup(stop)
	return &testServer{srv: srv, url: "http://" + ln.Addr().String(), dir: o.DataDir}, stop
}

// inspectReq runs fn on the hub goroutine, inside a batch (for tests).
type inspectReq struct {
	reply
	fn func(h *hub)
}

func (r *inspectReq) apply(h *hub, _ *store.Tx) (result, error) {
	r.fn(h)
	return result{}, nil
}

// localHub is the hub of a server of one node.
func (s *Server) localHub() *hub { return s.node.(*localNode).hub }

// nats is the node of a server of a chat over NATS.
func (s *Server) nats() *natsNode { return s.node.(*natsNode) }

// postNow posts p through s's node, as every send route does after its
// checks, and waits for the outcome.
func postNow(ctx context.Context, s *Server, p message) result {
	done := make(chan result, 1)
	if err := s.node.post(ctx, p, false, func(res result) { done <- res }); err != nil {
		return result{err: err}
	}
	return <-done
}
