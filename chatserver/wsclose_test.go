package chatserver

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// recordingConn keeps every byte read from the server.
type recordingConn struct {
	net.Conn
	mu  sync.Mutex
	got []byte
}

func (c *recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.got = append(c.got, p[:n]...)
	c.mu.Unlock()
	return n, err
}

// dialRecorded logs nick in over WebSocket through a recordingConn.
func dialRecorded(t *testing.T, ts *testServer, nick string) (*websocket.Conn, *recordingConn) {
	t.Helper()
	var rec *recordingConn
	d := websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			rec = &recordingConn{Conn: c}
			return rec, nil
		}
		return nil, err
	}}
	ws, _, err := d.Dial("ws"+strings.TrimPrefix(ts.url, "http")+"/ws?nick="+url.QueryEscape(nick), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws, rec
}

// serverFrames splits what a server sent after its handshake into the
// opcodes of its (unmasked) frames.
func serverFrames(t *testing.T, b []byte) []int {
	t.Helper()
	i := bytes.Index(b, []byte("\r\n\r\n"))
	if i < 0 {
		t.Fatal("no handshake answer")
	}
	b = b[i+4:]
	var ops []int
	for len(b) >= 2 {
		op, n, head := int(b[0]&0x0f), uint64(b[1]&0x7f), 2
		switch n {
		case 126:
			n, head = uint64(binary.BigEndian.Uint16(b[2:])), 4
		case 127:
			n, head = binary.BigEndian.Uint64(b[2:]), 10
		}
		if uint64(len(b)) < uint64(head)+n {
			t.Fatalf("a frame cut short: %d bytes left, the frame has %d", len(b), uint64(head)+n)
		}
		ops = append(ops, op)
		b = b[uint64(head)+n:]
	}
	return ops
}

// closeOf reads frames until the server's close and returns its code.
func closeOf(t *testing.T, ws *websocket.Conn) int {
	t.Helper()
	ws.SetReadDeadline(time.Now().Add(waitFor))
	for {
		_, data, err := ws.ReadMessage()
		if ce, ok := errors.AsType[*websocket.CloseError](err); ok {
			return ce.Code
		}
		if err != nil {
			t.Fatalf("no close frame: %v", err)
		}
		if bytes.Contains(data, []byte(`"error"`)) {
			t.Logf("notice before the close: %s", data)
		}
	}
}

// TestWSInvalidUTF8 (issue 21, item 15): a text frame that is not UTF-8
// fails the connection with 1007 (RFC 6455 8.1), and nothing is sent.
func TestWSInvalidUTF8(t *testing.T) {
	ts := startServer(t, Options{})
	bob := ts.login(t, "sse", "bob")
	bob.expect("Welcome bob!", "now online: ")
	ws, _ := dialRecorded(t, ts, "mallory")
	bob.expect("mallory has joined.")
	if err := ws.WriteMessage(websocket.TextMessage, []byte("{\"to\":\"bob\",\"text\":\"\xff\xfe\"}")); err != nil {
		t.Fatal(err)
	}
	if code := closeOf(t, ws); code != websocket.CloseInvalidFramePayloadData {
		t.Fatalf("close code %d, want 1007", code)
	}
	bob.expect("mallory has left.")
	bob.quiet()
}

// TestWSNothingAfterClose (issue 21, item 15): a frame over the limit
// closes with 1009, and that close is the last frame the server writes,
// although events keep coming for the user.
func TestWSNothingAfterClose(t *testing.T) {
	ts := startServer(t, Options{MaxMessageBytes: 16})
	ws, rec := dialRecorded(t, ts, "mallory")
	ctx, cancel := context.WithCancel(context.Background())
	var senders sync.WaitGroup
	senders.Go(func() {
		for ctx.Err() == nil {
			ts.msg(t, "mary", "all", "keep writing")
		}
	})
	defer func() { cancel(); senders.Wait() }()
	if err := ws.WriteMessage(websocket.TextMessage, bytes.Repeat([]byte("x"), 16*6+1024+1)); err != nil {
		t.Fatal(err)
	}
	if code := closeOf(t, ws); code != websocket.CloseMessageTooBig {
		t.Fatalf("close code %d, want 1009", code)
	}
	// Read what else the server wrote until it closes the connection.
	rec.Conn.SetReadDeadline(time.Now().Add(waitFor))
	var b [4096]byte
	for {
		if _, err := rec.Read(b[:]); err != nil {
			break
		}
	}
	rec.mu.Lock()
	ops := serverFrames(t, rec.got)
	rec.mu.Unlock()
	if len(ops) == 0 || ops[len(ops)-1] != websocket.CloseMessage {
		t.Fatalf("the server's last frame is opcode %v, want its close (8): frames %v", ops[len(ops)-1:], ops)
	}
	for i, op := range ops[:len(ops)-1] {
		if op == websocket.CloseMessage {
			t.Fatalf("frame %d is a close, followed by %v", i, ops[i+1:])
		}
	}
}
