package chatserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/wasmgap/wasmgap/chatserver/internal/auth"
	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// Transport writes one stream's events: SSE or WebSocket.
type Transport interface {
	SetDeadline(t time.Time)
	Event(ev *Event) error // may buffer; flush sends
	Note(msg string) error // an error for the client
	Ping() error
	Flush() error
	End(reason string, shuttingDown bool) // the last words before closing
	// AskAck asks the client to confirm it received the events of its user
	// with from < id <= to. A transport that can (a WebSocket: the pong to a
	// ping sent after them) confirms them itself and returns false; true
	// leaves it to the pump (the stream staying open for MailAckDelay).
	AskAck(from, to uint64) (byDelay bool, err error)
}

// ackDelivered tells the hub that nick's events with from < id <= to were
// delivered, so the offline messages among them leave the mailbox.
func (s *Server) ackDelivered(nick string, from, to uint64) {
	if s.cluster != nil {
		go s.cluster.ack(nick, from, to)
		return
	}
	s.hub.submit(context.Background(), &ackReq{nick: nick, from: from, to: to})
}

// pump writes a joined stream: the missed events, the welcome lines, the
// waiting messages, then live events until the client goes, the hub cuts the
// stream or ctx ends.
func (s *Server) pump(ctx context.Context, c *Conn, j Plan, t Transport, notes <-chan string) error {
	err := s.pumpEvents(ctx, c, j, t, notes)
	if reason := c.CutReason(); reason != "" && reason != cutClosed {
		// Cut by the hub; a write may have failed first (a stalled
		// client's buffers are full and its write deadline passed).
		level := slog.LevelWarn
		if s.hub.closing.Load() {
			level = slog.LevelInfo
		}
		s.opts.Logger.Log(context.Background(), level, "stream cut", "nick", c.Nick, "reason", reason, "write", err)
		return errors.New(reason)
	}
	return err
}

func (s *Server) pumpEvents(ctx context.Context, c *Conn, j Plan, t Transport, notes <-chan string) error {
	// Every write is bounded by a deadline between 3/4 of WriteTimeout and
	// WriteTimeout away: moving it costs a timer update, which a broadcast
	// to 10,000 streams would pay 10,000 times (12% of the server's CPU in
	// a profile of ws-fanout), so it moves only when a quarter has passed.
	var until time.Time
	deadline := func() {
		now := time.Now()
		if until.Sub(now) < s.opts.WriteTimeout*3/4 {
			until = now.Add(s.opts.WriteTimeout)
			t.SetDeadline(until)
		}
	}
	resume, hasResume := j.Resume, j.HasResume
	if j.Notice != "" {
		deadline()
		if err := t.Note(j.Notice); err != nil {
			return err
		}
	}
	if pruned := s.hub.pruned.Load(); hasResume && resume < pruned {
		deadline()
		if err := t.Note(fmt.Sprintf("events %d to %d are older than the retention window (%v) and were deleted: those addressed to you are missing from this resume", resume+1, pruned, s.opts.Retention)); err != nil {
			return err
		}
	}
	if hasResume {
		if err := s.replay(c, resume, j.ReplayTo, t, deadline); err != nil {
			return err
		}
	}
	deadline()
	for _, ev := range j.Preamble {
		if err := t.Event(ev); err != nil {
			return err
		}
	}
	if err := s.replay(c, j.MailFrom, j.MailTo, t, deadline); err != nil {
		return err
	}
	if err := t.Flush(); err != nil {
		return err
	}
	// Offline messages leave the mailbox once their delivery is known.
	var confirm <-chan time.Time
	ackFrom, ackTo := j.SeenFrom(), j.MailTo
	if j.MailPending {
		byDelay, err := t.AskAck(ackFrom, ackTo)
		if err != nil {
			return err
		}
		if byDelay {
			timer := time.NewTimer(s.opts.MailAckDelay)
			defer timer.Stop()
			confirm = timer.C
		}
	}
	tick := time.NewTicker(s.opts.KeepAlive)
	defer tick.Stop()
	var spare []*Event
	for {
		select {
		case <-c.Ready:
			evs := c.Take(spare)
			deadline()
			for _, ev := range evs {
				if err := t.Event(ev); err != nil {
					return err
				}
			}
			if err := t.Flush(); err != nil {
				return err
			}
			clear(evs)
			spare = evs
		case msg := <-notes:
			deadline()
			if err := t.Note(msg); err != nil {
				return err
			}
			if err := t.Flush(); err != nil {
				return err
			}
		case <-confirm:
			// Still open MailAckDelay after the flush, and a write after
			// that still goes through: the client read them.
			confirm = nil
			deadline()
			if err := t.Ping(); err != nil {
				return err
			}
			if ctx.Err() == nil {
				s.ackDelivered(c.Nick, ackFrom, ackTo)
			}
		case <-tick.C:
			deadline()
			if err := t.Ping(); err != nil {
				return err
			}
		case <-c.Gone:
			t.SetDeadline(time.Now().Add(time.Second))
			reason := c.CutReason()
			t.End(reason, s.hub.closing.Load())
			return errors.New(reason)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// replay writes the stored events c's user can see with after < id <= upTo.
func (s *Server) replay(c *Conn, after, upTo uint64, t Transport, deadline func()) error {
	for after < upTo {
		if s.hub.closing.Load() {
			// Shutting down: stop here, the client resumes later. (A stream
			// cut as slow finishes its replay: it always makes progress.)
			return ErrShuttingDown
		}
		recs, next, err := s.store.ReadLog(c.Nick, after, upTo, 256)
		if err != nil {
			// Damaged history: say so, never skip it silently.
			s.opts.Logger.Error("replay", "nick", c.Nick, "from", after+1, "to", upTo, "err", err)
			deadline()
			return t.Note(fmt.Sprintf("stored history is damaged: events %d to %d could not be read and are missing from this stream (%v)", after+1, upTo, err))
		}
		deadline()
		for _, r := range recs {
			if err := t.Event(NewEvent(r.ID, r.Text)); err != nil {
				return err
			}
		}
		if err := t.Flush(); err != nil {
			return err
		}
		after = next
	}
	return nil
}

// join registers a new stream of nick with the hub; the caller must call
// the returned leave when the stream ends, whatever join returned.
func (s *Server) join(ctx context.Context, nick string, resume uint64, hasResume bool) (*Conn, result, func()) {
	if s.cluster != nil {
		return s.cluster.join(ctx, nick, resume, hasResume)
	}
	c := NewConn(nick, s.opts.QueueSize)
	res := s.hub.do(ctx, &joinReq{conn: c, resume: resume, hasResume: hasResume})
	return c, res, func() { s.hub.do(context.Background(), &leaveReq{conn: c}) }
}

// SSE writes "id: <n>\ndata: <text>\n\n" events on a response.
type SSE struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (t *SSE) SetDeadline(d time.Time) { t.rc.SetWriteDeadline(d) }
func (t *SSE) Event(ev *Event) error {
	_, err := t.w.Write(ev.SSE)
	return err
}
func (t *SSE) Note(msg string) error {
	_, err := t.w.Write([]byte(": error: " + strings.ReplaceAll(msg, "\n", " ") + "\n\n"))
	return err
}
func (t *SSE) Ping() error {
	if _, err := t.w.Write([]byte(": ping\n\n")); err != nil {
		return err
	}
	return t.rc.Flush()
}
func (t *SSE) Flush() error { return t.rc.Flush() }

// AskAck: an event stream has no way back; the pump waits MailAckDelay.
func (t *SSE) AskAck(from, to uint64) (bool, error) { return true, nil }
func (t *SSE) End(reason string, _ bool) {
	t.w.Write([]byte(": closed: " + reason + "\n\n"))
	t.rc.Flush()
}

// serveSSE logs nick in over Server-Sent Events.
func (s *Server) serveSSE(w http.ResponseWriter, r *http.Request, nick string) {
	if !methodIs(w, r, http.MethodGet) {
		return
	}
	if httpguard.CrossSite(r) {
		// A page of another site would log its visitor in as anyone.
		http.Error(w, fmt.Sprintf("cross-site login refused: the browser says this request came from another site (Sec-Fetch-Site %q); log in from the chat's own page, or with a client that is not a browser (curl)", r.Header.Get("Sec-Fetch-Site")), http.StatusForbidden)
		return
	}
	if err := ValidNick(nick); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	raw := r.Header.Get("Last-Event-ID")
	if raw == "" {
		raw = r.URL.Query().Get("last_event_id")
	}
	resume, hasResume, err := resumeID(raw)
	if err != nil {
		http.Error(w, "Last-Event-ID: "+err.Error(), http.StatusBadRequest)
		return
	}
	grant, err := s.auth.AuthorizeLogin(r.Context(), r, nick)
	if err != nil {
		s.refuseAuth(w, err, false)
		return
	}
	admitted, ok := s.admitStream(w, r)
	if !ok {
		grant.Release()
		return
	}
	release := func() { admitted(); grant.Release() }

	c, res, leave := s.join(r.Context(), nick, resume, hasResume)
	if res.err != nil {
		leave()
		release()
		http.Error(w, "log in: "+res.err.Error(), http.StatusServiceUnavailable)
		return
	}
	addr := r.RemoteAddr
	extra := grant.Header(nick)
	if nc, ok := s.hijackSSE(w, r, extra); ok {
		// The stream runs on its own goroutines and this handler returns,
		// so that net/http lets go of the request and of its buffers: an
		// idle stream holds no buffer at all.
		go func() {
			defer release()
			defer leave()
			defer nc.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				// The client sends nothing more: a read ends when it goes.
				defer cancel()
				var b [64]byte
				for {
					if _, err := nc.Read(b[:]); err != nil {
						return
					}
				}
			}()
			s.opts.Logger.Info("connect", "nick", nick, "transport", "sse", "addr", addr, "resume", raw)
			err := s.pump(ctx, c, res.joined, &RawSSE{c: nc}, nil)
			s.opts.Logger.Info("disconnect", "nick", nick, "transport", "sse", "why", err)
		}()
		return
	}
	defer release()
	defer leave()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	for k, v := range extra {
		h[k] = v
	}
	w.WriteHeader(http.StatusOK)
	s.opts.Logger.Info("connect", "nick", nick, "transport", "sse", "addr", addr, "resume", raw)
	err = s.pump(r.Context(), c, res.joined, &SSE{w: w, rc: http.NewResponseController(w)}, nil)
	s.opts.Logger.Info("disconnect", "nick", nick, "transport", "sse", "why", err)
}

// sseHeader is the head of an event stream's response on a hijacked
// connection: the body ends when the connection closes.
const sseHeader = " 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\nConnection: close\r\n\r\n"

// hijackSSE takes over an HTTP/1 connection for an event stream and writes
// the response's head; false when the connection cannot be taken over (the
// stream then goes through net/http).
func (s *Server) hijackSSE(w http.ResponseWriter, r *http.Request, extra http.Header) (net.Conn, bool) {
	if r.ProtoMajor != 1 {
		return nil, false
	}
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, false
	}
	nc.SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
	if brw.Writer.Buffered() > 0 {
		brw.Writer.Flush()
	}
	head := "HTTP/1." + strconv.Itoa(r.ProtoMinor) + sseHeader
	if len(extra) > 0 {
		var b strings.Builder
		extra.Write(&b)
		head = strings.TrimSuffix(head, "\r\n") + b.String() + "\r\n"
	}
	if _, err := nc.Write([]byte(head)); err != nil {
		nc.Close()
		// The stream is already answered: a dead connection ends as one.
		return nopConn{nc}, true
	}
	return nc, true
}

// nopConn is a connection that failed: reads and writes fail at once.
type nopConn struct{ net.Conn }

func (nopConn) Read([]byte) (int, error)  { return 0, net.ErrClosed }
func (nopConn) Write([]byte) (int, error) { return 0, net.ErrClosed }

// RawSSE writes an event stream on a hijacked connection. Events are
// gathered in a buffer lent by sseBuffers for the time of one flush.
type RawSSE struct {
	c   net.Conn
	buf *[]byte
}

var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func (t *RawSSE) SetDeadline(d time.Time) { t.c.SetWriteDeadline(d) }
func (t *RawSSE) add(p []byte) error {
	if t.buf == nil {
		t.buf = buffers.Get().(*[]byte)
	}
	*t.buf = append(*t.buf, p...)
	if len(*t.buf) >= 32<<10 {
		return t.Flush()
	}
	return nil
}
func (t *RawSSE) Event(ev *Event) error { return t.add(ev.SSE) }
func (t *RawSSE) Note(msg string) error {
	return t.add([]byte(": error: " + strings.ReplaceAll(msg, "\n", " ") + "\n\n"))
}
func (t *RawSSE) Ping() error {
	if err := t.add([]byte(": ping\n\n")); err != nil {
		return err
	}
	return t.Flush()
}
func (t *RawSSE) Flush() error {
	if t.buf == nil {
		return nil
	}
	_, err := t.c.Write(*t.buf)
	*t.buf = (*t.buf)[:0]
	if cap(*t.buf) <= 64<<10 {
		buffers.Put(t.buf)
	}
	t.buf = nil
	return err
}
func (t *RawSSE) AskAck(from, to uint64) (bool, error) { return true, nil }
func (t *RawSSE) End(reason string, _ bool) {
	t.add([]byte(": closed: " + reason + "\n\n"))
	t.Flush()
}

// WS writes {"id":<n>,"text":"..."} text frames. Event frames
// are built once per event (event.ws) and gathered in a buffer lent by
// sseBuffers for the time of one flush, written straight to the connection
// in one write however many events are waiting; control frames go through
// gorilla/websocket. mu keeps the two from interleaving (the reader
// goroutine answers the client's pings).
type WS struct {
	ws    *websocket.Conn
	ack   *wsAck
	mu    *sync.Mutex
	buf   *[]byte
	until time.Time // under mu: the events' write deadline (setDeadline)
	// closed, under mu, is set once a close frame was written: no frame
	// may follow it (RFC 6455 5.5.1), so every later write fails.
	closed bool
}

// wsAck is the delivery confirmation a WebSocket waits for: the pong that
// echoes the payload of a ping sent right after the events it confirms
// (a client answers pings in order, after reading what came before them).
type wsAck struct {
	want atomic.Pointer[ackRange]
}

type ackRange struct {
	from, to uint64
	payload  string
}

// pong takes the payload of a pong and returns the range it confirms.
func (a *wsAck) pong(payload string) (ackRange, bool) {
	p := a.want.Load()
	if p == nil || p.payload != payload || !a.want.CompareAndSwap(p, nil) {
		return ackRange{}, false
	}
	return *p, true
}

func (t *WS) AskAck(from, to uint64) (bool, error) {
	r := &ackRange{from: from, to: to, payload: fmt.Sprintf("ack %d %d", from, to)}
	t.ack.want.Store(r)
	return false, t.Control(websocket.PingMessage, []byte(r.payload))
}

func (t *WS) Control(kind int, data []byte) error {
	if err := t.Flush(); err != nil {
		return err
	}
	return t.WriteControl(kind, data)
}

// WriteControl writes a control frame under a deadline of its own (one
// second), then puts the events' deadline back: gorilla sets the
// connection's write deadline for the frame and leaves it there, and the
// pump moves its deadline only now and then.
func (t *WS) WriteControl(kind int, data []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return websocket.ErrCloseSent
	}
	if kind == websocket.CloseMessage {
		t.closed = true
	}
	err := t.ws.WriteControl(kind, data, time.Now().Add(time.Second))
	if !t.until.IsZero() {
		t.ws.NetConn().SetWriteDeadline(t.until)
	}
	return err
}

// SetDeadline bounds the writes of events; control frames carry their own.
func (t *WS) SetDeadline(d time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.until = d
	t.ws.NetConn().SetWriteDeadline(d)
}
func (t *WS) add(frame []byte) error {
	if t.buf == nil {
		t.buf = buffers.Get().(*[]byte)
	}
	*t.buf = append(*t.buf, frame...)
	if len(*t.buf) >= 32<<10 {
		return t.Flush()
	}
	return nil
}
func (t *WS) Event(ev *Event) error { return t.add(ev.WS) }
func (t *WS) Note(msg string) error {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return t.add(AppendTextFrame(nil, b))
}
func (t *WS) Ping() error { return t.Control(websocket.PingMessage, nil) }
func (t *WS) Flush() error {
	if t.buf == nil {
		return nil
	}
	t.mu.Lock()
	err := websocket.ErrCloseSent
	if !t.closed {
		_, err = t.ws.NetConn().Write(*t.buf)
	}
	t.mu.Unlock()
	*t.buf = (*t.buf)[:0]
	if cap(*t.buf) <= 64<<10 {
		buffers.Put(t.buf)
	}
	t.buf = nil
	return err
}
func (t *WS) End(reason string, shuttingDown bool) {
	t.Note(reason)
	code, short := websocket.CloseTryAgainLater, "slow consumer: resume from the last id"
	if shuttingDown {
		code, short = websocket.CloseGoingAway, "server shutting down: resume from the last id"
	}
	t.Control(websocket.CloseMessage, websocket.FormatCloseMessage(code, short))
}

// CloseWith ends the connection with a close frame of code and reason
// (at most 123 bytes), the last frame written.
func (t *WS) CloseWith(code int, reason string) {
	t.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason))
}

// ReadBuffer is the read buffer of a WebSocket: a client's frames are
// short, and a longer one is read through it in pieces.
const ReadBuffer = 512

// WriteBuffers lends WebSockets their write buffer for the time of a write.
var WriteBuffers = &sync.Pool{}

// Frame is what a WebSocket client sends.
type Frame struct {
	To   string `json:"to"`
	Text string `json:"text"`
}

// DecodeFrame reads a WebSocket client's text frame: one JSON object
// {"to","text"} and nothing else.
func DecodeFrame(data []byte) (Frame, error) {
	var f Frame
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf(`frame is not the JSON {"to":"<nick> or all","text":"<message>"}: %v`, err)
	}
	if dec.More() {
		return f, errors.New(`frame has more after the JSON {"to":"<nick> or all","text":"<message>"}: send one object per frame`)
	}
	return f, nil
}

// serveWS logs a user in over WebSocket.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if !methodIs(w, r, http.MethodGet) {
		return
	}
	q := r.URL.Query()
	nick := q.Get("nick")
	if err := ValidNick(nick); err != nil {
		http.Error(w, "nick: "+err.Error(), http.StatusBadRequest)
		return
	}
	resume, hasResume, err := resumeID(q.Get("resume"))
	if err != nil {
		http.Error(w, "resume: "+err.Error(), http.StatusBadRequest)
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		http.Error(w, "this is the chat's WebSocket endpoint: connect with a WebSocket client (ws://.../ws?nick=<nick>)", http.StatusBadRequest)
		return
	}
	if origin := r.Header.Get("Origin"); !s.originAllowed(origin, r.Host) {
		http.Error(w, fmt.Sprintf("WebSocket origin %q is not allowed: only pages of this server (%s) or the allowed origins may connect", origin, r.Host), http.StatusForbidden)
		return
	}
	grant, err := s.auth.AuthorizeLogin(r.Context(), r, nick)
	if err != nil {
		s.refuseAuth(w, err, false)
		return
	}
	admitted, ok := s.admitStream(w, r)
	if !ok {
		grant.Release()
		return
	}
	release := func() { admitted(); grant.Release() }

	up := websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		// An idle WebSocket holds only its small read buffer: the write
		// buffer is taken from a pool for each write, and net/http's
		// buffers are dropped once the handshake is done.
		ReadBufferSize:  ReadBuffer,
		WriteBufferSize: 4096,
		WriteBufferPool: WriteBuffers,
		CheckOrigin:     func(*http.Request) bool { return true }, // checked above
		// A browser that passes its token as the subprotocol token.<t>
		// offers this one beside it, for the server to select.
		Subprotocols: []string{auth.WSProtocol},
	}
	ws, err := up.Upgrade(w, r, grant.Header(nick))
	if err != nil {
		release()
		return // the upgrader answered the client
	}
	// The stream runs on its own goroutines: this handler returns, so that
	// net/http lets go of the request and of its buffers, which the
	// WebSocket no longer uses.
	addr, rawResume := r.RemoteAddr, q.Get("resume")
	go func() {
		defer release()
		s.runWS(ws, nick, resume, hasResume, addr, rawResume)
	}()
}

// runWS logs nick in on an upgraded WebSocket and runs its stream: this
// goroutine writes, another reads.
func (s *Server) runWS(ws *websocket.Conn, nick string, resume uint64, hasResume bool, addr, rawResume string) {
	defer ws.Close()
	t := &WS{ws: ws, ack: &wsAck{}, mu: &sync.Mutex{}}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, res, leave := s.join(ctx, nick, resume, hasResume)
	defer leave()
	if res.err != nil {
		t.SetDeadline(time.Now().Add(time.Second))
		t.Note("log in: " + res.err.Error())
		t.Control(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseTryAgainLater, "log in failed"))
		return
	}
	s.opts.Logger.Info("connect", "nick", nick, "transport", "ws", "addr", addr, "resume", rawResume)

	notes := make(chan string, 4)
	var reader sync.WaitGroup
	reader.Go(func() {
		defer cancel()
		s.readWS(ctx, ws, nick, addrHost(addr), t, notes)
	})
	err := s.pump(ctx, c, res.joined, t, notes)
	cancel()
	ws.Close()
	reader.Wait()
	s.opts.Logger.Info("disconnect", "nick", nick, "transport", "ws", "why", err)
}

// readWS reads a WebSocket's frames, sends each as nick's message (in
// order, without waiting for one to be stored before reading the next), and
// reports errors to the client through notes.
func (s *Server) readWS(ctx context.Context, ws *websocket.Conn, nick, addr string, t *WS, notes chan<- string) {
	ack := t.ack
	wait := 2 * s.opts.KeepAlive
	// A frame is read up to its limit, and one byte more tells it is over:
	// the connection then closes with 1009, from here, so that nothing is
	// written after the close frame (gorilla's own limit would write it
	// from the reader while the pump may still be writing events).
	limit := int64(s.opts.MaxMessageBytes)*6 + 1024
	ws.SetReadDeadline(time.Now().Add(wait))
	ws.SetPingHandler(func(payload string) error {
		err := t.WriteControl(websocket.PongMessage, []byte(payload))
		if err != nil && !errors.Is(err, websocket.ErrCloseSent) {
			if ne, ok := errors.AsType[net.Error](err); !ok || !ne.Timeout() {
				return err
			}
		}
		return nil
	})
	ws.SetCloseHandler(func(code int, text string) error {
		t.CloseWith(code, "")
		return nil
	})
	ws.SetPongHandler(func(payload string) error {
		if r, ok := ack.pong(payload); ok {
			s.ackDelivered(nick, r.from, r.to)
		}
		return ws.SetReadDeadline(time.Now().Add(wait))
	})
	tell := func(msg string) {
		select {
		case notes <- msg:
		case <-ctx.Done():
		}
	}
	// Up to 64 of this connection's posts may wait for their commit at once.
	inflight := make(chan struct{}, 64)
	var pending sync.WaitGroup
	defer pending.Wait()
	for {
		kind, data, err := ReadFrame(ws, limit)
		if errors.Is(err, ErrFrameTooLarge) {
			t.CloseWith(websocket.CloseMessageTooBig, fmt.Sprintf("frame too large: a message's text may have at most %d bytes", s.opts.MaxMessageBytes))
			return
		}
		if err != nil {
			return
		}
		ws.SetReadDeadline(time.Now().Add(wait))
		if kind != websocket.TextMessage {
			tell(`send text frames holding JSON {"to":"<nick> or all","text":"<message>"}`)
			continue
		}
		if !utf8.Valid(data) {
			// RFC 6455 8.1: a text frame that is not UTF-8 fails the connection.
			t.CloseWith(websocket.CloseInvalidFramePayloadData, "text frame is not valid UTF-8")
			return
		}
		f, err := DecodeFrame(data)
		if err != nil {
			tell(err.Error())
			continue
		}
		wait, err := s.sendPipelined(ctx, Post{From: nick, To: f.To, Text: f.Text, Addr: addr})
		if err != nil {
			tell(err.Error())
			continue
		}
		select {
		case inflight <- struct{}{}:
		case <-ctx.Done():
			return
		}
		pending.Go(func() {
			defer func() { <-inflight }()
			if err := wait(); err != nil {
				tell(err.Error())
			}
		})
	}
}

var ErrFrameTooLarge = errors.New("frame too large")

// ReadFrame reads the next data message of ws, of at most limit bytes.
func ReadFrame(ws *websocket.Conn, limit int64) (int, []byte, error) {
	kind, rd, err := ws.NextReader()
	if err != nil {
		return 0, nil, err
	}
	data, err := io.ReadAll(io.LimitReader(rd, limit+1))
	if err != nil {
		return 0, nil, err
	}
	if int64(len(data)) > limit {
		return 0, nil, ErrFrameTooLarge
	}
	return kind, data, nil
}

// originAllowed reports whether a WebSocket may connect from a page of origin.
func (s *Server) originAllowed(origin, host string) bool {
	if origin == "" {
		return true // not a browser
	}
	for _, o := range s.opts.AllowedOrigins {
		if o == "*" || strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, host)
}

// admitStream lets a new SSE or WebSocket stream in unless the server is shutting down or
// the client's address holds its maximum of streams, answering the refusal itself; release
// ends the stream's admission.
func (s *Server) admitStream(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	if !s.enter() {
		w.Header().Set("Retry-After", "1")
		http.Error(w, ErrShuttingDown.Error(), http.StatusServiceUnavailable)
		return nil, false
	}
	addr := clientAddr(r)
	if !s.addrs.acquire(addr) {
		s.exit()
		http.Error(w, fmt.Sprintf("too many open chat streams from %s: at most %d per address", addr, s.addrs.max), http.StatusTooManyRequests)
		return nil, false
	}
	return func() { s.addrs.release(addr); s.exit() }, true
}
