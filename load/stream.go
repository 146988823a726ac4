package load

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// event is one chat event as a subscriber receives it. text is empty for events that do not
// carry the run's token (welcome, presence notices): nobody reads their text, so it is not
// copied.
type event struct {
	id   uint64
	text string
}

// A receiver is meant to cost little memory, so that one process can hold 10,000 of them:
// one goroutine (no transport goroutines: streams are read from the connection itself, not
// through net/http's or a WebSocket library's client), a read buffer of streamBufferSize, and
// nothing copied from events that are not the run's messages. Lines and
// frames longer than the buffer (the chat's "now online: …" list with thousands of names) are
// skipped, not buffered. A receiver on an event loop (streamLoops) holds no read buffer at
// all while idle: the loop reads into its own, and a line or frame split across reads is
// kept in a pooled one until it is whole.
const (
	streamBufferSize = 1 << 10
	// maxFrame is the largest WebSocket frame a receiver decodes; longer ones are skipped.
	maxFrame = 4 << 10
)

// streamTarget is what every receiver of one target shares.
type streamTarget struct {
	base  *url.URL // the chat's base URL, ending in "/"
	addr  string   // host:port to dial
	tls   *tls.Config
	token []byte // the run's message token: only events that carry it are decoded
	proto protocol
}

func newStreamTarget(base *url.URL, proto protocol, token string) *streamTarget {
	t := &streamTarget{base: base, addr: base.Host, token: []byte(token), proto: proto}
	if base.Port() == "" {
		port := "80"
		if base.Scheme == "https" {
			port = "443"
		}
		t.addr = net.JoinHostPort(base.Hostname(), port)
	}
	if base.Scheme == "https" {
		t.tls = &tls.Config{ServerName: base.Hostname()}
	}
	return t
}

// subscriber is one logged-in chat user reading its event stream, over SSE or WebSocket.
// On a dropped connection it resumes from the last id it saw, as the chat's clients do.
type subscriber struct {
	t         *streamTarget
	nick      string
	transport string // "sse" or "ws"
	timeout   time.Duration

	// loops, when set, read the stream once the receiver has logged in (plain HTTP only):
	// see streamLoops.
	loops *streamLoops

	lastID     uint64
	reconnects int64
}

// errStreamEnded is returned when the server ended a stream on purpose (for example when
// shutting down).
var errStreamEnded = errors.New("stream ended by the server")

// run connects and calls onEvent for every event until ctx ends. ready is called once, after
// the first event (the chat's "Welcome <nick>!"), which says the user is online.
func (s *subscriber) run(ctx context.Context, ready func(), onEvent func(event)) error {
	first := true
	handle := func(ev event) {
		if first {
			first = false
			ready()
		}
		onEvent(ev)
	}
	for attempt := 0; ctx.Err() == nil; attempt++ {
		err := s.connect(ctx, handle)
		if ctx.Err() != nil {
			return nil
		}
		if first && attempt >= 2 {
			return fmt.Errorf("subscribe %s over %s: %w", s.nick, s.transport, err)
		}
		s.reconnects++
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(min(attempt+1, 10)) * 50 * time.Millisecond):
		}
	}
	return nil
}

// connect reads one connection's events until it ends or ctx does.
func (s *subscriber) connect(ctx context.Context, onEvent func(event)) error {
	if s.transport == "ws" {
		return s.runWS(ctx, onEvent)
	}
	return s.runSSE(ctx, onEvent)
}

func (s *subscriber) dial(ctx context.Context) (net.Conn, error) {
	d := net.Dialer{Timeout: s.timeout, KeepAlive: -1}
	conn, err := d.DialContext(ctx, "tcp", s.t.addr)
	if err != nil {
		return nil, err
	}
	if s.t.tls != nil {
		tc := tls.Client(conn, s.t.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		conn = tc
	}
	return conn, nil
}

// onFreshStack runs f on a goroutine of its own and waits for it. Dialling and reading an
// answer's head (TLS, net/http's parser) need a deep stack, reading a stream afterwards a
// shallow one: done on the receiver's own goroutine, the first would leave it an 8 KiB stack
// for the life of the stream, with thousands of streams.
func onFreshStack(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

func (s *subscriber) runSSE(ctx context.Context, onEvent func(event)) error {
	var conn net.Conn
	var resp *http.Response
	var br *bufio.Reader
	var err error
	onFreshStack(func() { conn, resp, br, err = s.openSSE(ctx) })
	if err != nil {
		return err
	}
	body := resp.Body
	// On a loop when the body is the connection's bytes until it closes (as the chat sends
	// it), not chunked or sized.
	if s.loops != nil && s.t.tls == nil && resp.ContentLength < 0 && len(resp.TransferEncoding) == 0 {
		return s.readOnLoop(ctx, conn, buffered(br), &sseParser{}, onEvent)
	}
	// Closed before the body, so that closing the body does not wait for the stream's end.
	defer body.Close()
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	return s.readStream(body, nil, &sseParser{}, onEvent, nil)
}

// openSSE logs in over SSE and returns the connection, the answer and the reader it was read
// through (holding the body's first bytes) once the answer's head says 200.
func (s *subscriber) openSSE(ctx context.Context) (net.Conn, *http.Response, *bufio.Reader, error) {
	uri, resume := s.t.proto.sse(s.t.base, s.nick, s.lastID)
	header := "Accept: text/event-stream\r\n"
	if resume > 0 {
		header += fmt.Sprintf("Last-Event-ID: %d\r\n", resume)
	}
	return s.get(ctx, uri, header, http.StatusOK)
}

// get sends GET uri with the header lines on a new connection, and returns the connection, the
// answer and the reader it was read through (holding what came after the answer's head) once
// the answer's status is want. The connection, the request and the head are bounded by the
// timeout.
func (s *subscriber) get(ctx context.Context, uri, header string, want int) (net.Conn, *http.Response, *bufio.Reader, error) {
	conn, err := s.dial(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("GET %s: %w", uri, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	conn.SetDeadline(time.Now().Add(s.timeout))
	br := bufio.NewReaderSize(conn, streamBufferSize)
	var resp *http.Response
	_, err = fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: wasmgap-load\r\n%s\r\n", uri, s.t.base.Host, header)
	if err == nil {
		resp, err = http.ReadResponse(br, nil)
	}
	if err == nil && resp.StatusCode != want {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		err = fmt.Errorf("HTTP %d %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	if err != nil {
		conn.Close()
		return nil, nil, nil, fmt.Errorf("GET %s: %w", uri, err)
	}
	conn.SetDeadline(time.Time{})
	return conn, resp, br, nil
}

// buffered is a copy of what br holds.
func buffered(br *bufio.Reader) []byte {
	b, _ := br.Peek(br.Buffered())
	return bytes.Clone(b)
}

// readStream reads a stream off the event loops: it feeds p pending, then what r reads, until
// the stream ends.
func (s *subscriber) readStream(r io.Reader, pending []byte, p streamParser, onEvent func(event), reply func(opcode byte, payload []byte) error) error {
	defer p.release()
	if err := p.feed(s, pending, onEvent, reply); err != nil {
		return err
	}
	buf := make([]byte, streamBufferSize)
	for {
		n, err := r.Read(buf)
		if err := p.feed(s, buf[:n], onEvent, reply); err != nil {
			return err
		}
		if err == io.EOF {
			return p.end()
		} else if err != nil {
			return err
		}
	}
}

// parseUint reads a decimal number without allocating.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

func (s *subscriber) runWS(ctx context.Context, onEvent func(event)) error {
	u, hello := s.t.proto.ws(s.t.base, s.nick, s.lastID)
	var conn net.Conn
	var pending []byte
	var err error
	onFreshStack(func() { conn, pending, err = s.openWS(ctx, &u, hello) })
	if err != nil {
		return err
	}
	if s.loops != nil && s.t.tls == nil {
		return s.readOnLoop(ctx, conn, pending, &wsParser{}, onEvent)
	}
	defer conn.Close()
	// Logged out as a client does: a close frame, then the connection closed.
	stop := context.AfterFunc(ctx, func() {
		conn.SetWriteDeadline(time.Now().Add(time.Second))
		conn.Write(wsClientFrame(wsClose, []byte{0x03, 0xe8})) // 1000: a normal closure
		conn.Close()
	})
	defer stop()
	reply := func(opcode byte, payload []byte) error {
		_, err := conn.Write(wsClientFrame(opcode, payload))
		return err
	}
	return s.readStream(conn, pending, &wsParser{}, onEvent, reply)
}

// openWS opens a WebSocket to u (ws://), sends hello when there is one, and returns the
// connection and the bytes read past the handshake's answer: the first frames, when they came
// with it.
func (s *subscriber) openWS(ctx context.Context, u *url.URL, hello []byte) (net.Conn, []byte, error) {
	var nonce [16]byte
	rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	conn, resp, br, err := s.get(ctx, u.RequestURI(), "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "+key+
		"\r\nSec-WebSocket-Version: 13\r\n", http.StatusSwitchingProtocols)
	if err != nil {
		return nil, nil, err
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		err = fmt.Errorf("GET %s: wrong Sec-WebSocket-Accept: %w", u, websocket.ErrBadHandshake)
	} else if hello != nil {
		conn.SetWriteDeadline(time.Now().Add(s.timeout))
		_, err = conn.Write(wsClientFrame(wsText, hello))
		conn.SetWriteDeadline(time.Time{})
	}
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, buffered(br), nil
}

// wsClientFrame is a final client frame of payload, masked as a client's frames must be (RFC
// 6455 §5.2) with a zero key: RFC 6455 asks for an unpredictable one against proxies that
// cache, which a load generator talking to its own server does not need.
func wsClientFrame(opcode byte, payload []byte) []byte {
	n := len(payload)
	h := []byte{0x80 | opcode}
	switch {
	case n < 126:
		h = append(h, 0x80|byte(n))
	case n < 1<<16:
		h = append(h, 0x80|126, byte(n>>8), byte(n))
	default:
		h = append(h, 0x80|127, 0, 0, 0, 0, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(append(h, 0, 0, 0, 0), payload...)
}

// errWSEOF is the error of a WebSocket the server closed without a close frame, as gorilla's
// reader words it.
var errWSEOF = errors.New("websocket: close 1006 (abnormal closure): unexpected EOF")
