package chatserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/page"
	"github.com/wasmgap/wasmgap/chatserver/internal/room"
	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// routes is the chat's handler: its routes behind the cross-origin check, so
// a page of another origin cannot make a user's browser send for them.
func (s *Server) routes() http.Handler {
	return s.guard(httpguard.CrossOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := httpguard.RepeatedQuery(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p := r.URL.Path
		switch {
		case p == "/":
			if methodIs(w, r, http.MethodGet, http.MethodHead) {
				page.Serve(w, r)
			}
		case p == "":
			// Mounted with http.StripPrefix("/chat", ...) and asked for
			// "/chat": the page's relative URLs need "/chat/".
			if u, err := url.ParseRequestURI(r.RequestURI); err == nil && !strings.HasSuffix(u.Path, "/") {
				u.Path += "/"
				http.Redirect(w, r, u.RequestURI(), http.StatusMovedPermanently)
				return
			}
			if methodIs(w, r, http.MethodGet, http.MethodHead) {
				page.Serve(w, r)
			}
		case p == "/send":
			httpguard.LimitBody(w, r, s.opts.BodyTimeout)
			s.serveSend(w, r)
		case p == "/ws":
			s.serveWS(w, r)
		case strings.HasPrefix(p, "/msg/"):
			httpguard.LimitBody(w, r, s.opts.BodyTimeout)
			s.serveMsg(w, r)
		case strings.Count(p, "/") == 1 && wantsEventStream(r):
			s.serveSSE(w, r, p[1:])
		default:
			http.Error(w, "not found: the chat page is at ./, log in with GET ./<nick> and Accept: text/event-stream, send with GET ./msg/<from>/<to>%20<text> or POST ./send", http.StatusNotFound)
		}
	})))
}

func wantsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(v, "text/event-stream") {
			return true
		}
	}
	return false
}

func methodIs(w http.ResponseWriter, r *http.Request, allowed ...string) bool {
	for _, m := range allowed {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	http.Error(w, fmt.Sprintf("method %s not allowed here: use %s", r.Method, strings.Join(allowed, " or ")), http.StatusMethodNotAllowed)
	return false
}

// msgPost reads the post of GET /msg/<from>/<to>%20<text> from the
// request's escaped path and checks it (validPost): its error is a refusal
// before any send, with its status. serveMsg and the fast path
// (fast.go) both read the route's post here and send it with send.
func (s *Server) msgPost(escaped string) (message, int, error) {
	var p message
	var err error
	if p.From, p.To, p.Text, err = room.ParseMsgPath(escaped); err != nil {
		return message{}, http.StatusBadRequest, err
	}
	if err := validPost(p, s.opts.MaxMessageBytes); err != nil {
		return message{}, statusOf(err), err
	}
	return p, http.StatusOK, nil
}

// serveMsg is the article's send route: GET /msg/<from>/<to>%20<text>.
// Its answer is the same short body every time, so ab's length check holds.
func (s *Server) serveMsg(w http.ResponseWriter, r *http.Request) {
	if !methodIs(w, r, http.MethodGet, http.MethodPost) {
		return
	}
	if httpguard.CrossSite(r) {
		// A link or an image of another site would send as the user.
		http.Error(w, fmt.Sprintf("cross-site send refused: the browser says this request came from another site (Sec-Fetch-Site %q); send from the chat's own page, or with a client that is not a browser (curl, ab)", r.Header.Get("Sec-Fetch-Site")), http.StatusForbidden)
		return
	}
	p, status, err := s.msgPost(r.URL.EscapedPath())
	if err != nil {
		s.sendError(w, status, err, false)
		return
	}
	if err := s.auth.AuthorizeSend(r.Context(), r, p.From); err != nil {
		s.refuseAuth(w, err, false)
		return
	}
	p.Addr = s.clientAddr(r)
	_, status, err = s.send(r.Context(), p)
	if err != nil {
		s.sendError(w, status, err, false)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok\n"))
}

// serveSend is POST /send with {"from","to","text"}.
func (s *Server) serveSend(w http.ResponseWriter, r *http.Request) {
	if !methodIs(w, r, http.MethodPost) {
		return
	}
	if err := httpguard.RequireJSON(r); err != nil {
		// A cross-site form or no-cors fetch can send text/plain, never JSON.
		s.sendError(w, http.StatusUnsupportedMediaType, fmt.Errorf(`%w, the body {"from":"<nick>","to":"<nick> or all","text":"<message>"}`, err), true)
		return
	}
	body := http.MaxBytesReader(w, r.Body, int64(s.opts.MaxMessageBytes)*6+1024)
	var in message
	var err error
	if in.From, in.To, in.Text, err = room.DecodeSend(body); err != nil {
		status := http.StatusBadRequest
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			status = http.StatusRequestEntityTooLarge
		}
		if bt, ok := errors.AsType[*httpguard.BodyTimeoutError](err); ok {
			// Whichever deadline it was (this route's, or a server's that
			// mounts the chat): the body's lateness, not its JSON.
			s.sendError(w, bt.StatusCode(), bt, true)
			return
		}
		s.sendError(w, status, err, true)
		return
	}
	if err := ValidNick(in.From); err != nil {
		s.sendError(w, statusOf(err), fmt.Errorf("from: %w", err), true)
		return
	}
	if err := s.auth.AuthorizeSend(r.Context(), r, in.From); err != nil {
		s.refuseAuth(w, err, true)
		return
	}
	in.Addr = s.clientAddr(r) // never the body's
	offline, status, err := s.send(r.Context(), in)
	if err != nil {
		s.sendError(w, status, err, true)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if !offline {
		w.Write([]byte(`{"ok":true}` + "\n"))
		return
	}
	// The offline acknowledgement: how long the message waits.
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(struct {
		OK      bool   `json:"ok"`
		Offline string `json:"offline"`
	}{true, fmt.Sprintf("%s is offline: the message is kept for %v and delivered at their next login", in.To, s.opts.Retention)})
}

// send validates, rate-limits and posts p through the node; on failure it
// returns the HTTP status that fits. offline: the receiver had no open
// stream, the message waits in its mailbox for the Retention.
func (s *Server) send(ctx context.Context, p message) (offline bool, status int, err error) {
	done := make(chan struct{})
	s.sendThen(ctx, p, func(o bool, st int, e error) { offline, status, err = o, st, e; close(done) })
	<-done
	return offline, status, err
}

// sendThen is send for a caller that does not wait: then gets what send
// returns once p is stored and delivered (node.post's then: it must not
// block or wait for the node), or at once when refused.
func (s *Server) sendThen(ctx context.Context, p message, then func(offline bool, status int, err error)) {
	if !s.enter() {
		then(false, http.StatusServiceUnavailable, ErrShuttingDown)
		return
	}
	if status, err := s.admit(&p); err != nil {
		s.exit()
		then(false, status, err)
		return
	}
	published := func(res result) {
		status, err := s.published(p, res)
		s.exit()
		then(res.offline && err == nil, status, err)
	}
	if err := s.node.post(ctx, p, false, published); err != nil {
		published(result{err: err})
	}
}

// sendPipelined is send for a stream of posts from one client that need no
// answer each (WebSocket frames): it hands p to the node pipelined and
// returns at once, in order, leaving wait to learn the outcome, so one
// connection can have many posts in one store commit. The caller must be
// inside enter/exit until wait returns.
func (s *Server) sendPipelined(ctx context.Context, p message) (wait func() error, err error) {
	if _, err := s.admit(&p); err != nil {
		return nil, err
	}
	done := make(chan result, 1)
	if err := s.node.post(ctx, p, true, func(res result) { done <- res }); err != nil {
		_, err = s.published(p, result{err: err})
		return nil, err
	}
	return func() error {
		_, err := s.published(p, <-done)
		return err
	}, nil
}

// admit checks p and its sender's rate, and stamps p with the time.
func (s *Server) admit(p *message) (int, error) {
	if err := validPost(*p, s.opts.MaxMessageBytes); err != nil {
		return statusOf(err), err
	}
	if ok, wait := s.senders.Allow(p.From); !ok {
		return http.StatusTooManyRequests, &RateError{From: p.From, Rule: s.senders.Rule(), Wait: wait}
	}
	if p.Time.IsZero() {
		p.Time = time.Now()
	}
	return http.StatusOK, nil
}

// published maps the outcome of posting p to an HTTP status, by the
// error's kind; an error of no kind is the server's failure (500, logged).
// A message kept for an offline receiver holds the receiver's claim, if
// any, for as long as it waits (auth.Claims.Keep).
func (s *Server) published(p message, res result) (int, error) {
	err := res.err
	if err == nil {
		if res.offline && s.auth.Claims != nil {
			go func() {
				if err := s.auth.KeepClaim(context.Background(), p.To); err != nil {
					s.opts.Logger.Warn("keep a nickname's claim for its mail", "nick", p.To, "err", err)
				}
			}()
		}
		return http.StatusOK, nil
	}
	if status := statusOf(err); status != 0 {
		return status, err
	}
	s.opts.Logger.Error("send", "from", p.From, "to", p.To, "err", err)
	return http.StatusInternalServerError, fmt.Errorf("send failed: %w", err)
}

func (s *Server) sendError(w http.ResponseWriter, status int, err error, asJSON bool) {
	if after := retryAfter(status, err); after != "" {
		w.Header().Set("Retry-After", after)
	}
	text := answerText(status, err)
	if !asJSON {
		http.Error(w, text, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]string{"error": text})
}

// resumeID parses a resume id: "" means none.
func resumeID(v string) (uint64, bool, error) {
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, refuse(ErrInvalid, "resume id %q is not an event id: use the decimal id of the last event received", v)
	}
	return n, true, nil
}
