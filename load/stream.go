package load

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
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
// one goroutine (no transport goroutines: SSE is read from the connection itself, not through
// net/http's client), read buffers of streamBufferSize, a WebSocket write buffer only while a
// frame is written, and nothing copied from events that are not the run's messages. Lines and
// frames longer than the buffer (the chat's "now online: …" list with thousands of names) are
// skipped, not buffered. A receiver on an event loop (streamLoops) holds no read buffer at
// all while idle: the loop reads into its own, and a line or frame split across reads is
// kept in a pooled one until it is whole.
const (
	streamBufferSize = 1 << 10
	// maxFrame is the largest WebSocket frame a receiver decodes; longer ones are skipped.
	maxFrame = 4 << 10
)

// frameBuffers lends receivers a buffer for one WebSocket frame at a time.
var frameBuffers = sync.Pool{New: func() any { return new([maxFrame]byte) }}

// wsWriteBuffers lends WebSocket write buffers to receivers while they write a frame
// (a pong, the close): none is held by an idle receiver.
var wsWriteBuffers = &sync.Pool{}

// streamTarget is what every receiver of one target shares.
type streamTarget struct {
	base   *url.URL // the chat's base URL, ending in "/"
	addr   string   // host:port to dial
	tls    *tls.Config
	dialer *websocket.Dialer
	token  []byte // the run's message token: only events that carry it are decoded
	// centrifugo, when set, says the target is a Centrifugo server (centrifugo.go).
	centrifugo *CentrifugoOptions
}

func newStreamTarget(base *url.URL, timeout time.Duration, token string) *streamTarget {
	t := &streamTarget{base: base, addr: base.Host, token: []byte(token)}
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
	t.dialer = &websocket.Dialer{HandshakeTimeout: timeout, ReadBufferSize: streamBufferSize,
		WriteBufferPool: wsWriteBuffers, TLSClientConfig: t.tls}
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
		var err error
		switch s.transport {
		case "ws":
			err = s.runWS(ctx, handle)
		default:
			err = s.runSSE(ctx, handle)
		}
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
		return s.readOnLoop(ctx, conn, buffered(br), &sseParser{}, nil, onEvent)
	}
	// Closed before the body, so that closing the body does not wait for the stream's end.
	defer body.Close()
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	return s.readSSE(body, onEvent)
}

// openSSE logs in over SSE and returns the connection, the answer and the reader it was read
// through (holding the body's first bytes) once the answer's head says 200.
func (s *subscriber) openSSE(ctx context.Context) (net.Conn, *http.Response, *bufio.Reader, error) {
	u := s.t.base.JoinPath(url.PathEscape(s.nick))
	uri := u.RequestURI()
	if s.t.centrifugo != nil {
		uri = s.centrifugoSSEPath()
	}
	conn, err := s.dial(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	fail := func(err error) (net.Conn, *http.Response, *bufio.Reader, error) {
		conn.Close()
		return nil, nil, nil, err
	}

	var req bytes.Buffer
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nUser-Agent: wasmgap-load\r\n", uri, u.Host)
	if s.lastID > 0 && s.t.centrifugo == nil {
		fmt.Fprintf(&req, "Last-Event-ID: %d\r\n", s.lastID)
	}
	req.WriteString("\r\n")
	conn.SetDeadline(time.Now().Add(s.timeout)) // until the answer's head
	if _, err := conn.Write(req.Bytes()); err != nil {
		return fail(fmt.Errorf("GET %s: %w", u, err))
	}
	br := bufio.NewReaderSize(conn, streamBufferSize)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return fail(fmt.Errorf("GET %s: %w", u, err))
	}
	if resp.StatusCode != 200 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return fail(fmt.Errorf("GET %s: HTTP %d %s", u, resp.StatusCode, strings.TrimSpace(string(msg))))
	}
	conn.SetDeadline(time.Time{})
	return conn, resp, br, nil
}

// buffered is a copy of what br holds.
func buffered(br *bufio.Reader) []byte {
	b, _ := br.Peek(br.Buffered())
	return bytes.Clone(b)
}

// readSSE reads events from an SSE stream's body until it ends.
func (s *subscriber) readSSE(body io.Reader, onEvent func(event)) error {
	buf := make([]byte, streamBufferSize)
	var p sseParser
	defer p.release()
	for {
		n, err := body.Read(buf)
		p.feed(s, buf[:n], onEvent)
		if err != nil {
			if err == io.EOF {
				return errStreamEnded
			}
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
	u := *s.t.base
	if u.Scheme == "https" {
		u.Scheme = "wss"
	} else {
		u.Scheme = "ws"
	}
	u.Path += "ws"
	q := url.Values{"nick": {s.nick}}
	if s.lastID > 0 {
		q.Set("resume", strconv.FormatUint(s.lastID, 10))
	}
	u.RawQuery = q.Encode()
	if s.t.centrifugo != nil {
		u = centrifugoWSURL(s.t.base)
	}
	if s.loops != nil && s.t.tls == nil {
		var conn net.Conn
		var pending []byte
		var err error
		onFreshStack(func() { conn, pending, err = s.openWS(ctx, &u) })
		if err != nil {
			return err
		}
		return s.readOnLoop(ctx, conn, pending, nil, &wsParser{}, onEvent)
	}
	var conn *websocket.Conn
	var resp *http.Response
	var err error
	onFreshStack(func() { conn, resp, err = s.t.dialer.DialContext(ctx, u.String(), nil) })
	if err != nil {
		if resp != nil {
			return fmt.Errorf("dial %s: HTTP %d: %w", u.String(), resp.StatusCode, err)
		}
		return fmt.Errorf("dial %s: %w", u.String(), err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	reply := func(opcode byte, payload []byte) error { return conn.WriteMessage(int(opcode), payload) }
	if s.t.centrifugo != nil {
		if err := conn.WriteMessage(websocket.TextMessage, s.centrifugoConnectCommand()); err != nil {
			return fmt.Errorf("connect to centrifugo: %w", err)
		}
	}
	var msg wsMessage
	for {
		_, r, err := conn.NextReader()
		if err != nil {
			return err
		}
		buf := frameBuffers.Get().(*[maxFrame]byte)
		err = s.wsFrame(r, buf[:], onEvent, reply, &msg)
		frameBuffers.Put(buf)
		if err != nil {
			return err
		}
	}
}

// openWS opens a WebSocket to u (ws://) and returns the connection and the bytes read past
// the handshake's answer: the first frames, when they came with it.
func (s *subscriber) openWS(ctx context.Context, u *url.URL) (net.Conn, []byte, error) {
	conn, err := s.dial(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("dial %s: %w", u, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	fail := func(err error) (net.Conn, []byte, error) {
		conn.Close()
		return nil, nil, fmt.Errorf("dial %s: %w", u, err)
	}
	var nonce [16]byte
	rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	var req bytes.Buffer
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nUser-Agent: wasmgap-load\r\n\r\n", u.RequestURI(), u.Host, key)
	conn.SetDeadline(time.Now().Add(s.timeout)) // until the handshake's answer
	if _, err := conn.Write(req.Bytes()); err != nil {
		return fail(err)
	}
	br := bufio.NewReaderSize(conn, streamBufferSize)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return fail(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return fail(fmt.Errorf("HTTP %d: %w", resp.StatusCode, websocket.ErrBadHandshake))
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		return fail(fmt.Errorf("HTTP %d: wrong Sec-WebSocket-Accept: %w", resp.StatusCode, websocket.ErrBadHandshake))
	}
	if s.t.centrifugo != nil {
		// The connect command, masked as a client's frames must be (a zero key: see
		// loopStream.reply).
		cmd := s.centrifugoConnectCommand()
		frame := append(wsClientHead(wsText, len(cmd)), cmd...)
		if _, err := conn.Write(frame); err != nil {
			return fail(fmt.Errorf("connect to centrifugo: %w", err))
		}
	}
	conn.SetDeadline(time.Time{})
	return conn, buffered(br), nil
}

// wsClientHead is the head of a final client frame of n payload bytes with a zero masking
// key (RFC 6455 §5.2).
func wsClientHead(opcode byte, n int) []byte {
	h := []byte{0x80 | opcode}
	switch {
	case n < 126:
		h = append(h, 0x80|byte(n))
	case n < 1<<16:
		h = append(h, 0x80|126, byte(n>>8), byte(n))
	default:
		h = append(h, 0x80|127, 0, 0, 0, 0, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(h, 0, 0, 0, 0)
}

// wsMessage is a chat frame: an event, or an error the server reports.
type wsMessage struct {
	ID    uint64 `json:"id"`
	Text  string `json:"text"`
	Error string `json:"error"`
}

// wsFrame reads one frame into frame (a lent buffer) and hands it on. Only frames that carry
// the run's token are decoded; the others give their id, read in place.
func (s *subscriber) wsFrame(r io.Reader, frame []byte, onEvent func(event), reply func(opcode byte, payload []byte) error, msg *wsMessage) error {
	n, err := io.ReadFull(r, frame)
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF:
	case err != nil:
		return err
	default:
		// Longer than maxFrame: the online list or another notice, never a run's message.
		if _, err := io.Copy(io.Discard, r); err != nil {
			return err
		}
		return s.wsMessageFrame(nil, true, onEvent, reply, msg)
	}
	return s.wsMessageFrame(frame[:n], false, onEvent, reply, msg)
}

// wsMessageFrame hands on one chat frame b, or a frame longer than maxFrame (tooLong, b
// unread). Only frames that carry the run's token are decoded; the others give their id, read
// in place.
func (s *subscriber) wsMessageFrame(b []byte, tooLong bool, onEvent func(event), reply func(opcode byte, payload []byte) error, msg *wsMessage) error {
	if s.t.centrifugo != nil {
		return s.centrifugoFrame(b, tooLong, onEvent, reply)
	}
	if tooLong {
		// The online list or another notice, never a run's message.
		onEvent(event{id: s.lastID})
		return nil
	}
	if !bytes.Contains(b, s.t.token) {
		// A notice: only its id matters (to resume from), read without decoding.
		if id, ok := frameID(b); ok && id > 0 {
			s.lastID = id
		} else if bytes.Contains(b, []byte(`"error"`)) && !bytes.Contains(b, []byte(`"text"`)) {
			return nil
		}
		onEvent(event{id: s.lastID})
		return nil
	}
	msg.ID, msg.Text, msg.Error = 0, "", ""
	if err := json.Unmarshal(b, msg); err != nil {
		return fmt.Errorf("WebSocket frame %q: %w", truncate(b), err)
	}
	if msg.Error != "" && msg.Text == "" {
		return nil
	}
	if msg.ID > 0 {
		s.lastID = msg.ID
	}
	onEvent(event{id: msg.ID, text: msg.Text})
	return nil
}

// frameID reads the "id" field of a chat frame ({"id":123,…}) without decoding the rest.
func frameID(b []byte) (uint64, bool) {
	i := bytes.Index(b, []byte(`"id":`))
	if i < 0 {
		return 0, false
	}
	b = bytes.TrimLeft(b[i+5:], " ")
	j := 0
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	return parseUint(b[:j])
}
