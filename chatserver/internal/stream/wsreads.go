package stream

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/wasmgap/wasmgap/chatserver/internal/nbio"
)

// ReadBuffer is a WebSocket's read buffer: a client's frames are short,
// and a longer one is read through it in pieces. gorilla/websocket reads
// through the hijacked reader only when it holds more than 256 bytes.
const ReadBuffer = 288

// ErrSilent ends the reads of a client that sent nothing, not even a pong,
// for the silence the reads were given.
var ErrSilent = errors.New("the client sent nothing, not even a pong to the pings, for too long")

// Upgraded is a WebSocket upgraded by Upgrade: gorilla/websocket reads it
// through a reader whose buffered bytes WSReads can see.
type Upgraded struct {
	WS    *websocket.Conn
	nc    *nbio.Prefixed
	br    *bufio.Reader
	guard *frameGuard // between nc and br
}

// Upgrade upgrades r to a WebSocket with up (whose ReadBufferSize is
// ignored: gorilla reads through a ReadBuffer-byte reader of this
// package's), answering the client itself when it fails, as up.Upgrade.
func Upgrade(up websocket.Upgrader, w http.ResponseWriter, r *http.Request, header http.Header) (*Upgraded, error) {
	return upgrade(up, w, r, header, false)
}

// UpgradeSpeakingFirst is Upgrade for a server that writes first (the
// chat's welcome, or a close frame): the handshake's answer waits for that
// first write and goes out with it, in one write and one wake-up of the
// client. A client waits for the answer before it sends, so a server that
// waits for the client's first message must use Upgrade.
func UpgradeSpeakingFirst(up websocket.Upgrader, w http.ResponseWriter, r *http.Request, header http.Header) (*Upgraded, error) {
	return upgrade(up, w, r, header, true)
}

func upgrade(up websocket.Upgrader, w http.ResponseWriter, r *http.Request, header http.Header, hold bool) (*Upgraded, error) {
	h := &wsHijack{ResponseWriter: w, hold: hold}
	up.ReadBufferSize = 0 // gorilla reuses the hijacked reader: ours
	ws, err := up.Upgrade(h, r, header)
	if err != nil {
		return nil, err
	}
	if h.nc == nil || ws.NetConn() != net.Conn(h.nc) {
		ws.Close()
		return nil, errors.New("websocket: the upgrade did not read through the hijacked connection")
	}
	// gorilla reset the reader onto the connection (measuring its size):
	// nothing is read yet, so it reads through the guard from here on.
	h.br.Reset(h.guard)
	return &Upgraded{WS: ws, nc: h.nc, br: h.br, guard: h.guard}, nil
}

// wsHijack hands gorilla, at the upgrade, the connection wrapped in a
// nbio.Prefixed (whose Pending holds what the idle reads took from the
// socket and left for gorilla) and a reader of ReadBuffer bytes over it.
type wsHijack struct {
	http.ResponseWriter
	nc    *nbio.Prefixed
	br    *bufio.Reader
	guard *frameGuard
	hold  bool // the handshake's answer, gorilla's first write, waits (UpgradeSpeakingFirst)
}

func (h *wsHijack) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := h.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("websocket: response does not implement http.Hijacker")
	}
	c, brw, err := hj.Hijack()
	if err != nil || brw.Reader.Buffered() > 0 {
		return c, brw, err // bytes before the handshake's end: gorilla refuses them
	}
	h.nc = &nbio.Prefixed{Conn: c, Hold: h.hold}
	h.guard = &frameGuard{r: h.nc}
	h.br = bufio.NewReaderSize(h.nc, ReadBuffer)
	return h.nc, bufio.NewReadWriter(h.br, brw.Writer), nil
}

// WSReads reads a WebSocket's data messages and hands each to its handler.
// While the client sends, a goroutine reads through gorilla/websocket;
// between messages, when neither gorilla's reader nor Pending holds a
// byte of the client's, the connection waits in a nbio.Watcher and holds no
// goroutine. The pings and pongs an idle client sends are read then by the
// watch's call and answered with ws's own handlers (PingHandler and
// PongHandler, as set before Start); anything else is handed back to
// gorilla with the bytes already read. A client silent for longer than the
// silence given (no message, no pong) is cut: the socket's read deadline
// while a goroutine reads, a timer while it waits.
type WSReads struct {
	u       *Upgraded
	w       *nbio.Watcher
	limit   int64
	silence time.Duration
	message func(kind int, data []byte) bool
	end     func(error)

	mu        sync.Mutex
	lastHeard time.Time   // under mu
	watch     nbio.Watch  // under mu: while parked
	parked    bool        // under mu: waiting in w, no goroutine reading
	stopped   bool        // under mu: Stop or the silence timer ended the reads
	why       error       // under mu: what stopped them
	timer     *time.Timer // the silence while parked; made at the first park
	ended     sync.Once
}

// NewWSReads returns the reads of u: messages of at most limit bytes (a
// longer one ends the reads with ErrFrameTooLarge), a client silent for
// silence cut. A nil w (or one that cannot watch u) keeps a goroutine
// reading throughout.
func NewWSReads(u *Upgraded, w *nbio.Watcher, limit int64, silence time.Duration) *WSReads {
	u.guard.limit = limit
	return &WSReads{u: u, w: w, limit: limit, silence: silence}
}

// frameGuard reads the client's bytes for gorilla, following its frames'
// headers as they pass: a data message whose frames declare more than
// limit bytes fails the read with ErrFrameTooLarge as soon as the header
// that says so arrives, where reading up to the limit would wait for a
// payload a client may never send (a frame can declare 2^63-1 bytes).
type frameGuard struct {
	r     io.Reader
	limit int64 // a message's most bytes (0: not yet set)
	hdr   [14]byte
	hn    int    // header bytes collected
	left  uint64 // payload bytes of the frame still to pass
	msg   uint64 // payload bytes declared by the data message so far
}

func (g *frameGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if ferr := g.follow(p[:n]); ferr != nil {
		return 0, ferr
	}
	return n, err
}

// follow moves through b's frames.
func (g *frameGuard) follow(b []byte) error {
	for len(b) > 0 {
		if g.left > 0 {
			skip := min(g.left, uint64(len(b)))
			g.left -= skip
			b = b[skip:]
			continue
		}
		g.hdr[g.hn] = b[0]
		g.hn++
		b = b[1:]
		if g.hn < 2 {
			continue
		}
		need := 2
		switch g.hdr[1] & 0x7f {
		case 126:
			need += 2
		case 127:
			need += 8
		}
		if g.hdr[1]&0x80 != 0 {
			need += 4
		}
		if g.hn < need {
			continue
		}
		length := uint64(g.hdr[1] & 0x7f)
		switch length {
		case 126:
			length = uint64(binary.BigEndian.Uint16(g.hdr[2:]))
		case 127:
			length = binary.BigEndian.Uint64(g.hdr[2:])
		}
		switch op := g.hdr[0] & 0x0f; {
		case op == websocket.TextMessage || op == websocket.BinaryMessage:
			g.msg = length
		case op == 0: // a continuation
			g.msg += length
			if g.msg < length {
				g.msg = math.MaxUint64 // declared past 2^64
			}
		}
		if g.limit > 0 && g.msg > uint64(g.limit) {
			return ErrFrameTooLarge
		}
		g.left, g.hn = length, 0
	}
	return nil
}

// Start starts the reads: message is called with each data message, in
// order, from the goroutine that read it (false ends the reads); end is
// called once, last, with why the reads ended (nil: message or Stop ended
// them; ErrSilent; ErrFrameTooLarge; or the read's error). Start returns at
// once.
func (r *WSReads) Start(message func(kind int, data []byte) bool, end func(error)) {
	r.message, r.end = message, end
	// A ping or a pong is heard, whoever reads it: gorilla, or wake.
	ws := r.u.WS
	for _, h := range []struct {
		get func() func(string) error
		set func(func(string) error)
	}{{ws.PingHandler, ws.SetPingHandler}, {ws.PongHandler, ws.SetPongHandler}} {
		handle := h.get()
		h.set(func(payload string) error { r.heard(); return handle(payload) })
	}
	r.heard()
	go r.read()
}

// heard moves the silence's end: the client just sent something.
func (r *WSReads) heard() {
	now := time.Now()
	r.mu.Lock()
	r.lastHeard = now
	r.mu.Unlock()
	r.u.WS.SetReadDeadline(now.Add(r.silence))
}

// Stop ends the reads and closes the connection: reads that wait end at
// once, a goroutine reading ends when its read fails.
func (r *WSReads) Stop() { r.interrupt(nil) }

func (r *WSReads) interrupt(why error) {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	r.stopped, r.why = true, why
	// A watch stopped here is this call's to end; one told already is on
	// its way to wake, which finds the reads stopped.
	parked := r.parked && r.watch.Stop()
	r.parked = false
	r.mu.Unlock()
	r.u.nc.Close() // after the watch's end: the descriptor may be reused
	if parked {
		go r.finish(why)
	}
}

func (r *WSReads) finish(err error) {
	r.ended.Do(func() {
		r.mu.Lock()
		if r.timer != nil {
			r.timer.Stop()
		}
		r.mu.Unlock()
		r.end(err)
	})
}

// read reads messages through gorilla until nothing of the client's is
// buffered, then parks the reads in the watcher, or goes on reading when
// it cannot.
func (r *WSReads) read() {
	for {
		if r.u.br.Buffered() == 0 && len(r.u.nc.Pending) == 0 && r.park() {
			return
		}
		kind, data, err := ReadFrame(r.u.WS, r.limit)
		if err != nil {
			r.mu.Lock()
			if r.stopped {
				err = r.why
			}
			r.mu.Unlock()
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				err = ErrSilent // the read deadline heard set
			}
			r.finish(err)
			return
		}
		r.heard()
		if !r.message(kind, data) {
			r.finish(nil)
			return
		}
	}
}

// park hands the connection to the watcher until it has bytes to read;
// false when it cannot (no watcher, stopped): the caller reads on.
func (r *WSReads) park() bool {
	if r.w == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return false // the read that follows fails: the connection is closed
	}
	watch, err := r.w.Readable(r.u.nc, r.wake)
	if err != nil {
		return false
	}
	r.watch, r.parked = watch, true
	left := r.silence - time.Since(r.lastHeard)
	if r.timer == nil {
		r.timer = time.AfterFunc(left, r.silent)
	} else {
		r.timer.Reset(left)
	}
	return true
}

// silent cuts parked reads whose client has been silent for the silence.
func (r *WSReads) silent() {
	r.mu.Lock()
	quiet := r.parked && time.Since(r.lastHeard) >= r.silence
	r.mu.Unlock()
	if quiet {
		r.interrupt(ErrSilent)
	}
}

// wake runs when a parked connection has something to read: the pings and
// pongs at the front of what arrived are answered here; anything else goes
// to a goroutine reading through gorilla, the bytes read first.
func (r *WSReads) wake() {
	r.mu.Lock()
	r.parked = false
	stopped, why := r.stopped, r.why
	r.mu.Unlock()
	if stopped {
		r.finish(why)
		return
	}
	nc := r.u.nc
	buf := make([]byte, ReadBuffer)
	n, wouldBlock, err := nbio.ReadNow(nc.Conn, buf)
	switch {
	case err != nil:
		r.finish(err)
		return
	case n == 0 && !wouldBlock:
		r.finish(io.EOF)
		return
	}
	nc.Pending = append(nc.Pending, buf[:n]...)
	for len(nc.Pending) > 0 {
		size, complete := controlFrame(nc.Pending)
		if size == 0 {
			r.read() // a data frame, a close, or what gorilla refuses
			return
		}
		if !complete {
			break // the rest of a ping or pong is on its way
		}
		if err := r.control(nc.Pending[:size]); err != nil {
			r.finish(err)
			return
		}
		nc.Pending = nc.Pending[size:]
	}
	if len(nc.Pending) == 0 {
		nc.Pending = nil
	}
	if !r.park() {
		r.read()
	}
}

// controlFrame measures the client's ping or pong at the front of p:
// its size, and whether p holds all of it; size 0 when p does not begin
// with a well-formed ping or pong (final, unextended, masked, at most 125
// bytes).
func controlFrame(p []byte) (size int, complete bool) {
	if len(p) < 2 {
		return 0, false
	}
	op, length := p[0], p[1]
	if op != 0x80|websocket.PingMessage && op != 0x80|websocket.PongMessage || length&0x80 == 0 || length&0x7f > 125 {
		return 0, false
	}
	size = 2 + 4 + int(length&0x7f)
	return size, len(p) >= size
}

// control answers a whole ping or pong frame f with ws's handler.
func (r *WSReads) control(f []byte) error {
	key, payload := f[2:6], make([]byte, len(f)-6)
	for i := range payload {
		payload[i] = f[6+i] ^ key[i%4]
	}
	var handle func(string) error
	if f[0]&0x0f == websocket.PingMessage {
		handle = r.u.WS.PingHandler()
	} else {
		handle = r.u.WS.PongHandler()
	}
	if err := handle(string(payload)); err != nil {
		return fmt.Errorf("websocket: control frame: %w", err)
	}
	return nil
}
