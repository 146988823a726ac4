package fastpath

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// appendReply appends the handler's answer r, in form f, to b: net/http's
// status line, header order, Date, Content-Length and Connection; for a
// refusal, http.Error's headers and Retry-After.
func appendReply(b []byte, f Form, r Reply, now time.Time) []byte {
	b = append(b, f.Proto()...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(r.Status)...)
	b = append(b, "\r\nContent-Type: text/plain; charset=utf-8\r\n"...)
	if r.Status != http.StatusOK {
		if r.RetryAfter != "" {
			b = append(b, "Retry-After: "...)
			b = append(b, r.RetryAfter...)
			b = append(b, "\r\n"...)
		}
		b = append(b, "X-Content-Type-Options: nosniff\r\n"...)
	}
	b = append(b, "Date: "...)
	b = append(b, httpDate(now)...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(r.Text)+1), 10)
	b = append(b, "\r\n"...)
	if c := f.Connection(); c != "" {
		b = append(b, "Connection: "...)
		b = append(b, c...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, r.Text...)
	return append(b, '\n')
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
