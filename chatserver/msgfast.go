package chatserver

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// The article's send route, GET /msg/<from>/<to>%20<text>, answered before
// net/http: pageListener reads a plain request for it (parsePageRequest's
// pageSend), sendFast sends its post with the handler's functions (msgPost,
// send) and writes the answer net/http's handler would write for the same
// outcome, in one write. A post refused before it is sent (a bad path, nick
// or text) is handed to net/http with its connection, which answers it.
//
// A profile of `ab -c 10` on this route put half of the server's CPU in
// net/http's per-connection work (a goroutine, bufio readers and writers, a
// Request with its Header map and context, the ResponseWriter).

// sendFast sends the post of req, a pageSend request, and appends the
// answer to dst; sent is false when the post is refused before sending (the
// request is net/http's then) or s is nil.
func (s *Server) sendFast(req pageRequest, addr string, dst []byte) (answer []byte, sent bool) {
	if s == nil {
		return dst, false
	}
	p, _, err := s.msgPost(string(req.target))
	if err != nil {
		return dst, false
	}
	// net/http's request context ends when the client leaves; the send
	// then goes on all the same (Publish does not undo a post), so no
	// context is needed here.
	p.addr = addr
	_, status, err := s.send(context.Background(), p)
	return appendMsgAnswer(dst, req.form, status, err, time.Now()), true
}

// appendMsgAnswer appends serveMsg's answer to an outcome of send: "ok" or
// the error's text (http.Error's headers and Retry-After), with net/http's
// status line, header order, Date, Content-Length and Connection for form.
func appendMsgAnswer(b []byte, form, status int, err error, now time.Time) []byte {
	f := &pageForms[form]
	b = append(b, f.proto...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(status)...)
	b = append(b, "\r\nContent-Type: text/plain; charset=utf-8\r\n"...)
	body := "ok\n"
	if err != nil {
		body = err.Error() + "\n"
		if after := retryAfter(status, err); after != "" {
			b = append(b, "Retry-After: "...)
			b = append(b, after...)
			b = append(b, "\r\n"...)
		}
		b = append(b, "X-Content-Type-Options: nosniff\r\n"...)
	}
	b = append(b, "Date: "...)
	b = append(b, httpDate(now)...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n"...)
	if f.connection != "" {
		b = append(b, "Connection: "...)
		b = append(b, f.connection...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, body...)
}

type formattedDate struct {
	unix int64
	text string
}

var currentDate atomic.Pointer[formattedDate]

// httpDate is now's Date header value, formatted once a second.
func httpDate(now time.Time) string {
	unix := now.Unix()
	if d := currentDate.Load(); d != nil && d.unix == unix {
		return d.text
	}
	d := &formattedDate{unix: unix, text: now.UTC().Format(http.TimeFormat)}
	currentDate.Store(d)
	return d.text
}
