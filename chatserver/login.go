package chatserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/wasmgap/wasmgap/chatserver/internal/auth"
	"github.com/wasmgap/wasmgap/chatserver/internal/nbio"
	"github.com/wasmgap/wasmgap/chatserver/internal/stream"
	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// startStream starts writing a joined stream (stream.Start, onEnd as its).
func (s *Server) startStream(c *stream.Conn, j stream.Plan, t stream.Transport, onEnd func()) *stream.Writer {
	return stream.Start(c, j, t, writerHost{s}, stream.Timing{WriteTimeout: s.opts.WriteTimeout, KeepAlive: s.opts.KeepAlive, MailAckDelay: s.opts.MailAckDelay, Retention: s.opts.Retention}, onEnd)
}

// stopStream stops a stream's writer and returns why it ended, logging a cut.
func (s *Server) stopStream(c *stream.Conn, l *stream.Writer) error {
	err := l.Stop()
	if reason := c.CutReason(); reason != "" && reason != stream.Closed {
		// Cut by the hub; a write may have failed first (a stalled
		// client's buffers are full and its write deadline passed).
		level := slog.LevelWarn
		if s.stopping.Load() {
			level = slog.LevelInfo
		}
		s.opts.Logger.Log(context.Background(), level, "stream cut", "nick", c.Nick, "reason", reason, "write", err)
		return errors.New(reason)
	}
	return err
}

// writerHost is what a stream's writer asks of its server.
type writerHost struct{ s *Server }

func (h writerHost) Pruned() uint64                         { return h.s.node.pruned() }
func (h writerHost) Closing() bool                          { return h.s.stopping.Load() }
func (h writerHost) Delivered(nick string, from, to uint64) { h.s.node.ack(nick, from, to) }
func (h writerHost) Loops() *stream.Loops                   { return h.s.writers }
func (h writerHost) Replay(c *stream.Conn, after, upTo uint64, t stream.Transport, deadline func()) error {
	return h.s.replay(c, after, upTo, t, deadline)
}

// replay writes the stored events c's user can see with after < id <= upTo.
func (s *Server) replay(c *stream.Conn, after, upTo uint64, t stream.Transport, deadline func()) error {
	for after < upTo {
		if s.stopping.Load() {
			// Shutting down: stop here, the client resumes later. (A stream
			// cut as slow finishes its replay: it always makes progress.)
			return ErrShuttingDown
		}
		recs, next, err := s.node.readLog(c.Nick, after, upTo, 256)
		if err != nil {
			// Damaged history: say so, never skip it silently.
			s.opts.Logger.Error("replay", "nick", c.Nick, "from", after+1, "to", upTo, "err", err)
			deadline()
			return t.Note(fmt.Sprintf("stored history is damaged: events %d to %d could not be read and are missing from this stream (%v)", after+1, upTo, err))
		}
		deadline()
		for _, r := range recs {
			if err := t.Event(stream.NewEvent(r.ID, r.Text)); err != nil {
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
	grant, budget, release, ok := s.authorizeStream(w, r, nick)
	if !ok {
		return
	}

	c, res, leave := s.node.join(r.Context(), nick, resume, hasResume)
	leave = budgeted(c, budget, leave)
	if res.err != nil {
		leave()
		release()
		http.Error(w, "log in: "+answerText(http.StatusServiceUnavailable, res.err), http.StatusServiceUnavailable)
		return
	}
	addr := r.RemoteAddr
	extra := grant.Header(nick)
	if nc, ok := stream.Hijack(w, r, extra, s.opts.WriteTimeout); ok {
		// This handler returns, so that net/http lets go of the request
		// and of its buffers: an idle stream holds no buffer at all.
		s.runSSE(nc, c, res.joined, leave, release, addr, raw)
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
	l := s.startStream(c, res.joined, stream.NewSSE(w), nil)
	select {
	case <-r.Context().Done():
	case <-l.Done():
	}
	err = s.stopStream(c, l)
	s.opts.Logger.Info("disconnect", "nick", nick, "transport", "sse", "why", err)
}

// runSSE starts an event stream on a hijacked connection and returns: its
// writes run on the writer loops or a writer of its own (startStream), and
// its client's going is told by the server's watcher (stream.ServeHijacked).
func (s *Server) runSSE(nc net.Conn, c *stream.Conn, j stream.Plan, leave, release func(), addr, rawResume string) {
	s.opts.Logger.Info("connect", "nick", c.Nick, "transport", "sse", "addr", addr, "resume", rawResume)
	s.boundSocket(nc)
	stream.ServeHijacked(nc, s.watcher, func(onEnd func()) *stream.Writer {
		return s.startStream(c, j, stream.NewRawSSE(nc), onEnd)
	}, func(l *stream.Writer) {
		err := s.stopStream(c, l)
		s.opts.Logger.Info("disconnect", "nick", c.Nick, "transport", "sse", "why", err)
		leave()
		release()
	})
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
	if origin := r.Header.Get("Origin"); !httpguard.OriginAllowed(origin, r.Host, s.opts.AllowedOrigins) {
		http.Error(w, fmt.Sprintf("WebSocket origin %q is not allowed: only pages of this server (%s) or the allowed origins may connect", origin, r.Host), http.StatusForbidden)
		return
	}
	grant, budget, release, ok := s.authorizeStream(w, r, nick)
	if !ok {
		return
	}

	up := websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		// An idle WebSocket holds only its small read buffer (stream.Upgrade's):
		// the write buffer is taken from a pool for each write, and
		// net/http's buffers are dropped once the handshake is done.
		WriteBufferSize: 4096,
		WriteBufferPool: stream.WriteBuffers,
		CheckOrigin:     func(*http.Request) bool { return true }, // checked above
		// A browser that passes its token as the subprotocol token.<t>
		// offers this one beside it, for the server to select.
		Subprotocols: []string{auth.WSProtocol},
	}
	u, err := stream.UpgradeSpeakingFirst(up, w, r, grant.Header(nick)) // runWS writes first: the welcome, or why the login failed
	if err != nil {
		release()
		return // the upgrader answered the client
	}
	// The stream runs on goroutines of its own, and none while it is idle:
	// this handler returns, so that net/http lets go of the request and
	// of its buffers, which the WebSocket no longer uses.
	go s.runWS(u, nick, resume, hasResume, r.RemoteAddr, q.Get("resume"), budget, release)
}

// runWS logs nick in on an upgraded WebSocket and starts its stream: its
// reads (stream.WSReads, in the server's watcher while idle) and its writes
// (startStream); release ends the stream's admission once all is over.
func (s *Server) runWS(u *stream.Upgraded, nick string, resume uint64, hasResume bool, addr, rawResume string, budget stream.Budget, release func()) {
	ws := u.WS
	t := stream.NewWS(ws)
	c, res, leave := s.node.join(context.Background(), nick, resume, hasResume)
	leave = budgeted(c, budget, leave)
	if res.err != nil {
		t.SetDeadline(time.Now().Add(time.Second))
		t.Note("log in: " + answerText(http.StatusServiceUnavailable, res.err))
		t.Control(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseTryAgainLater, "log in failed"))
		leave()
		ws.Close()
		release()
		return
	}
	s.opts.Logger.Info("connect", "nick", nick, "transport", "ws", "addr", addr, "resume", rawResume)
	s.boundSocket(ws.NetConn())
	// The reads' context: its Done channel is made by a send or a note.
	ctx, cancel := context.WithCancel(context.Background())
	// A frame is read up to its limit, and one byte more tells it is over:
	// the connection then closes with 1009, from here, so that nothing is
	// written after the close frame (gorilla's own limit would write it
	// from the reader while the writer may still be writing events).
	reads := stream.NewWSReads(u, s.watcher, int64(s.opts.MaxMessageBytes)*6+1024, 2*s.opts.KeepAlive)
	// Once the stream ended (cut, a write failed), the reads end too.
	l := s.startStream(c, res.joined, t, func() { cancel(); reads.Stop() })
	onMessage, pending := s.wsMessages(ctx, ws, nick, s.proxies.Key(httpguard.PeerAddr(addr)), t, l)
	reads.Start(onMessage, func(err error) {
		if errors.Is(err, stream.ErrFrameTooLarge) {
			t.CloseWith(websocket.CloseMessageTooBig, fmt.Sprintf("frame too large: a message's text may have at most %d bytes", s.opts.MaxMessageBytes))
		}
		cancel()
		pending.Wait()
		err = s.stopStream(c, l)
		if l.Stalled() {
			// Its kernel buffers let go of what they hold for it at once.
			nbio.ResetOnClose(ws.NetConn())
		}
		s.opts.Logger.Info("disconnect", "nick", nick, "transport", "ws", "why", err)
		leave()
		ws.Close()
		release()
	})
}

// wsMessages returns the handler of a WebSocket's messages: each is sent as
// nick's message (in order, without waiting for one to be stored before
// reading the next), and errors reach the client through l's notes.
// pending holds the sends not yet stored; the handler's false ends the
// reads. It sets ws's control handlers.
func (s *Server) wsMessages(ctx context.Context, ws *websocket.Conn, nick, addr string, t *stream.WS, l *stream.Writer) (onMessage func(int, []byte) bool, pending *sync.WaitGroup) {
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
		if from, to, ok := t.Pong(payload); ok {
			s.node.ack(nick, from, to)
		}
		return nil
	})
	tell := func(msg string) { l.Note(ctx.Done(), msg) }
	// Up to 64 of this connection's posts may wait for their commit at once.
	var inflight chan struct{}
	pending = &sync.WaitGroup{}
	return func(kind int, data []byte) bool {
		if kind != websocket.TextMessage {
			tell(`send text frames holding JSON {"to":"<nick> or all","text":"<message>"}`)
			return true
		}
		if !utf8.Valid(data) {
			// RFC 6455 8.1: a text frame that is not UTF-8 fails the connection.
			t.CloseWith(websocket.CloseInvalidFramePayloadData, "text frame is not valid UTF-8")
			return false
		}
		f, err := stream.DecodeFrame(data)
		if err != nil {
			tell(err.Error())
			return true
		}
		wait, err := s.sendPipelined(ctx, message{From: nick, To: f.To, Text: f.Text, Addr: addr})
		if err != nil {
			tell(err.Error())
			return true
		}
		if inflight == nil {
			inflight = make(chan struct{}, 64)
		}
		select {
		case inflight <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		pending.Go(func() {
			defer func() { <-inflight }()
			if err := wait(); err != nil {
				tell(err.Error())
			}
		})
		return true
	}, pending
}

// authorizeStream authorizes a login as nick (auth.Guard) and admits its
// stream (admitStream), answering a refusal itself; release ends both.
func (s *Server) authorizeStream(w http.ResponseWriter, r *http.Request, nick string) (grant auth.Grant, budget stream.Budget, release func(), ok bool) {
	grant, err := s.auth.AuthorizeLogin(r.Context(), r, nick)
	if err != nil {
		s.refuseAuth(w, err, false)
		return grant, nil, nil, false
	}
	admitted, budget, ok := s.admitStream(w, r)
	if !ok {
		grant.Release()
		return grant, nil, nil, false
	}
	return grant, budget, func() { admitted(); grant.Release() }, true
}

// admitStream lets a new SSE or WebSocket stream in unless the server is
// shutting down, the client's address holds its maximum of streams, or its
// streams hold their most bytes unread (MaxQueuedBytesPerAddr, of which
// the new stream reserves its kernel send buffer), answering the refusal
// itself; budget is the address's bytes, release ends the stream's
// admission.
func (s *Server) admitStream(w http.ResponseWriter, r *http.Request) (release func(), budget stream.Budget, ok bool) {
	if !s.enter() {
		w.Header().Set("Retry-After", "1")
		http.Error(w, ErrShuttingDown.Error(), http.StatusServiceUnavailable)
		return nil, nil, false
	}
	addr := s.clientAddr(r)
	if !s.addrs.Acquire(addr) {
		s.exit()
		http.Error(w, fmt.Sprintf("too many open chat streams from %s: at most %d per address", addr, s.addrs.Max()), http.StatusTooManyRequests)
		return nil, nil, false
	}
	reserve := int64(2 * stream.SendBuffer(s.opts.MaxMessageBytes)) // the kernel doubles SO_SNDBUF
	ab, fits := s.queued.Open(addr, reserve)
	if !fits {
		s.addrs.Release(addr)
		s.exit()
		http.Error(w, fmt.Sprintf("the chat streams of %s hold too much their clients have not read: at most %d bytes per address, queued and in the kernel's buffers; read them, or close some", addr, s.opts.MaxQueuedBytesPerAddr), http.StatusTooManyRequests)
		return nil, nil, false
	}
	return s.streamHolds(r, func() { ab.Close(reserve); s.addrs.Release(addr); s.exit() }), ab, true
}

// budgeted makes c's queued events count against its address's budget
// until its leave.
func budgeted(c *stream.Conn, b stream.Budget, leave func()) func() {
	c.SetBudget(b)
	return func() {
		c.DropBudget()
		leave()
	}
}

// boundSocket gives a stream's socket its small send buffer.
func (s *Server) boundSocket(nc net.Conn) {
	if err := nbio.SetSendBuffer(nc, stream.SendBuffer(s.opts.MaxMessageBytes)); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		s.opts.Logger.Debug("stream send buffer", "err", err)
	}
}
