package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wasmgap/wasmgap/chatserver/internal/nbio"
)

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

// AskAck: an event stream has no way back; the writer waits MailAckDelay.
func (t *SSE) AskAck(from, to uint64) (bool, error) { return true, nil }
func (t *SSE) End(reason string, _ bool) {
	t.w.Write([]byte(": closed: " + reason + "\n\n"))
	t.rc.Flush()
}

// sseHeader is the head of an event stream's response on a hijacked
// connection: the body ends when the connection closes.
const sseHeader = " 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\nConnection: close\r\n\r\n"

// Hijack takes over an HTTP/1 connection for an event stream and writes
// the response's head (with extra's lines) within timeout; false when the
// connection cannot be taken over (the stream then goes through net/http,
// with SSE). A connection that fails while the head is written is returned
// as one whose reads and writes fail at once: the stream is answered.
func Hijack(w http.ResponseWriter, r *http.Request, extra http.Header, timeout time.Duration) (net.Conn, bool) {
	if r.ProtoMajor != 1 {
		return nil, false
	}
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, false
	}
	nc.SetWriteDeadline(time.Now().Add(timeout))
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

// RawSSE writes an event stream on a hijacked connection, its writes
// gathered in an outBuf.
type RawSSE struct {
	c   net.Conn
	raw nbio.Raw // c's, for the loops' writes
	out outBuf
}

var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// outBuf gathers a stream's writes in a buffer lent by buffers from the
// first write after a flush until the flush: an idle stream holds none.
type outBuf struct{ b *[]byte }

// add appends p; full when the buffer should be flushed now.
func (o *outBuf) add(p []byte) (full bool) {
	if o.b == nil {
		o.b = buffers.Get().(*[]byte)
	}
	*o.b = append(*o.b, p...)
	return len(*o.b) >= 32<<10
}

// flush writes the whole buffer with write and gives it back, written or not.
func (o *outBuf) flush(write func([]byte) (int, error)) error {
	if o.b == nil {
		return nil
	}
	_, err := write(*o.b)
	o.release()
	return err
}

// flushNow writes what the socket takes of the buffer without waiting,
// keeping the rest: done when nothing is left.
func (o *outBuf) flushNow(raw nbio.Raw) (done bool, err error) {
	if o.b == nil {
		return true, nil
	}
	n, _, err := raw.WriteNow(*o.b)
	if errors.Is(err, errors.ErrUnsupported) {
		return false, nil // Flush writes it all
	}
	if err != nil {
		return false, err
	}
	if n == len(*o.b) {
		o.release()
		return true, nil
	}
	*o.b = append((*o.b)[:0], (*o.b)[n:]...)
	return false, nil
}

// prepend puts p in front of the buffer.
func (o *outBuf) prepend(p []byte) {
	if o.b == nil {
		o.b = buffers.Get().(*[]byte)
	}
	n := len(*o.b)
	*o.b = append(*o.b, p...)
	copy((*o.b)[len(p):], (*o.b)[:n])
	copy(*o.b, p)
}

func (o *outBuf) release() {
	*o.b = (*o.b)[:0]
	if cap(*o.b) <= 64<<10 {
		buffers.Put(o.b)
	}
	o.b = nil
}

func (t *RawSSE) SetDeadline(d time.Time) { t.c.SetWriteDeadline(d) }
func (t *RawSSE) add(p []byte) error {
	if t.out.add(p) {
		return t.Flush()
	}
	return nil
}
func (t *RawSSE) Event(ev *Event) error { return t.add(ev.SSE) }
func (t *RawSSE) Append(ev *Event)      { t.out.add(ev.SSE) }
func (t *RawSSE) FlushNow() (bool, error) {
	return t.out.flushNow(t.raw)
}
func (t *RawSSE) Note(msg string) error {
	return t.add([]byte(": error: " + strings.ReplaceAll(msg, "\n", " ") + "\n\n"))
}
func (t *RawSSE) Ping() error {
	if err := t.add([]byte(": ping\n\n")); err != nil {
		return err
	}
	return t.Flush()
}
func (t *RawSSE) Flush() error                         { return t.out.flush(t.c.Write) }
func (t *RawSSE) AskAck(from, to uint64) (bool, error) { return true, nil }
func (t *RawSSE) End(reason string, _ bool) {
	t.add([]byte(": closed: " + reason + "\n\n"))
	t.Flush()
}

// WS writes {"id":<n>,"text":"..."} text frames. Event frames
// are built once per event (event.ws) and gathered in an outBuf, written
// straight to the connection in one write however many events are
// waiting; control frames go through gorilla/websocket. mu keeps the two
// from interleaving (the reads answer the client's pings).
type WS struct {
	ws    *websocket.Conn
	raw   nbio.Raw // the connection's, for the loops' writes
	ack   *wsAck
	mu    *sync.Mutex
	out   outBuf
	pre   *nbio.Prefixed // the connection, when it may hold the handshake's answer (Upgrade)
	until time.Time      // under mu: the events' write deadline (setDeadline)
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
// writer moves its deadline only now and then.
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
	if t.out.add(frame) {
		return t.Flush()
	}
	return nil
}
func (t *WS) Event(ev *Event) error { return t.add(ev.WS) }
func (t *WS) Append(ev *Event)      { t.out.add(ev.WS) }

// FlushNow writes what the socket takes of the events now (a loop's
// write); after a close frame, nothing (Flush then fails).
func (t *WS) FlushNow() (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false, nil
	}
	if t.pre != nil && len(t.pre.Held) > 0 {
		t.out.prepend(t.pre.TakeHeld()) // the handshake's answer, first
	}
	return t.out.flushNow(t.raw)
}
func (t *WS) Note(msg string) error {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return t.add(AppendTextFrame(nil, b))
}
func (t *WS) Ping() error { return t.Control(websocket.PingMessage, nil) }
func (t *WS) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.out.flush(func(p []byte) (int, error) {
		if t.closed {
			return 0, websocket.ErrCloseSent
		}
		return t.ws.NetConn().Write(p)
	})
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

// NewSSE returns the writer of an event stream on a response of net/http.
func NewSSE(w http.ResponseWriter) *SSE { return &SSE{w: w, rc: http.NewResponseController(w)} }

// NewRawSSE returns the writer of an event stream on a connection taken
// over by Hijack.
func NewRawSSE(c net.Conn) *RawSSE { return &RawSSE{c: c, raw: nbio.NewRaw(c)} }

// NewWS returns the writer of an upgraded WebSocket.
func NewWS(ws *websocket.Conn) *WS {
	pre, _ := ws.NetConn().(*nbio.Prefixed)
	return &WS{ws: ws, raw: nbio.NewRaw(ws.NetConn()), pre: pre, ack: &wsAck{}, mu: &sync.Mutex{}}
}

// Pong takes the payload of a pong and returns the range of events it
// confirms: ok when it answers the ping AskAck sent.
func (t *WS) Pong(payload string) (from, to uint64, ok bool) {
	r, ok := t.ack.pong(payload)
	return r.from, r.to, ok
}
