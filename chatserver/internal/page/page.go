// Package page is the chat's page, one self-contained HTML file (its script
// and style inline, every URL in it relative), and its answers: through
// net/http (Serve) and, prebuilt once per second of Date, for the fast
// path's plain requests (Answer), the same bytes both ways. Each of its
// two representations, plain and gzip, has a strong ETag, and a client
// that shows it gets 304.
package page

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/fastpath"
	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// HTML is the chat page.
//
//go:embed page.html
var HTML []byte

// CSP allows the page's own inline script (by hash) and style, and
// requests to this server only: an injected inline handler would not run
// even if some text ever reached the DOM as HTML.
var CSP = httpguard.PageCSP(HTML)

// pageGzip is the page compressed once, for the clients that accept gzip.
var pageGzip = func() []byte {
	var b bytes.Buffer
	z, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	z.Write(HTML)
	z.Close()
	return b.Bytes()
}()

// The page's two representations (plain and gzip), each with its strong
// ETag: a client that has one sends it back in If-None-Match and gets 304.
var pageVariants = [2]pageVariant{
	{body: HTML, etag: pageETag(HTML, "")},
	{body: pageGzip, etag: pageETag(HTML, "-gzip"), encoding: "gzip"},
}

type pageVariant struct {
	body     []byte
	etag     string
	encoding string // Content-Encoding, "" for none
}

func pageETag(page []byte, suffix string) string {
	sum := sha256.Sum256(page)
	return `"` + hex.EncodeToString(sum[:8]) + suffix + `"`
}

// pageHeaders are the headers of every answer to GET / (200 and 304) but
// Date, Content-Length, Content-Encoding and ETag, in the order they are
// written: canonical names, so that net/http only reads them.
var pageHeaders = []struct{ name, value string }{
	{"Cache-Control", "no-cache"},
	{"Content-Security-Policy", CSP},
	{"Content-Type", "text/html; charset=utf-8"},
	{"Vary", "Accept-Encoding"},
	{"X-Content-Type-Options", "nosniff"},
}

// ETag is the strong ETag of the plain page, or of the gzip one.
func ETag(gzip bool) string {
	if gzip {
		return pageVariants[1].etag
	}
	return pageVariants[0].etag
}

// Serve answers GET or HEAD (the caller refuses other methods) through
// net/http: the handler mounted under a prefix, and the requests the fast
// path hands over. Answer gives the fast path's plain ones the same bytes.
func Serve(w http.ResponseWriter, r *http.Request) {
	v := &pageVariants[0]
	if acceptsGzip(r.Header["Accept-Encoding"]) {
		v = &pageVariants[1]
	}
	h := w.Header()
	for _, f := range pageHeaders {
		h[f.name] = []string{f.value}
	}
	h["Etag"] = []string{v.etag}
	if v.encoding != "" {
		h["Content-Encoding"] = []string{v.encoding}
	}
	if noneMatch := r.Header["If-None-Match"]; len(noneMatch) > 0 && etagListed(noneMatch, v.etag) {
		delete(h, "Content-Type")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Length"] = []string{strconv.Itoa(len(v.body))}
	if r.Method == http.MethodHead {
		return
	}
	w.Write(v.body)
}

// acceptsGzip reports whether Accept-Encoding values take gzip (and do not
// refuse it with q=0).
func acceptsGzip(values []string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
				continue
			}
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// etagListed reports whether If-None-Match values list etag or "*", with
// the weak comparison RFC 9110 13.1.2 asks for (W/ ignored).
func etagListed(values []string, etag string) bool {
	for _, v := range values {
		for tag := range strings.SplitSeq(v, ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == "*" || tag == etag {
				return true
			}
		}
	}
	return false
}

// Answer is the complete answer to the fast path's plain GET or HEAD of
// the page at now (head and body in one buffer, written with one write)
// and the length of its head, the answer to HEAD.
func Answer(r *fastpath.Request, now time.Time) ([]byte, int) {
	v, st := 0, 0
	if acceptsGzip(r.AcceptEncoding) {
		v = 1
	}
	if len(r.IfNoneMatch) > 0 && etagListed(r.IfNoneMatch, pageVariants[v].etag) {
		st = 1
	}
	a := &pageAnswersAt(now).answers[v][st][r.Form]
	return a.bytes, a.head
}

// pageAnswers are the complete answers to GET / (head and body in one
// buffer, written with one write) for one second of Date, built once per
// second: [variant][status: 200, 304][form].
type pageAnswers struct {
	unix    int64
	answers [2][2][fastpath.NumForms]pageAnswer
}

type pageAnswer struct {
	bytes []byte // head and body
	head  int    // the head's length: the answer to HEAD
}

var currentPageAnswers atomic.Pointer[pageAnswers]

// pageAnswersAt returns the answers whose Date is now's second.
func pageAnswersAt(now time.Time) *pageAnswers {
	unix := now.Unix()
	if a := currentPageAnswers.Load(); a != nil && a.unix == unix {
		return a
	}
	a := buildPageAnswers(now)
	currentPageAnswers.Store(a)
	return a
}

func buildPageAnswers(now time.Time) *pageAnswers {
	a := &pageAnswers{unix: now.Unix()}
	date := now.UTC().Format(http.TimeFormat)
	for vi := range pageVariants {
		v := &pageVariants[vi]
		for st, status := range []string{"200 OK", "304 Not Modified"} {
			for form := range fastpath.NumForms {
				var b []byte
				b = append(b, form.Proto()...)
				b = append(b, ' ')
				b = append(b, status...)
				b = append(b, "\r\n"...)
				field := func(name, value string) {
					b = append(b, name...)
					b = append(b, ": "...)
					b = append(b, value...)
					b = append(b, "\r\n"...)
				}
				if c := form.Connection(); c != "" {
					field("Connection", c)
				}
				if v.encoding != "" {
					field("Content-Encoding", v.encoding)
				}
				for _, f := range pageHeaders {
					if st == 1 && f.name == "Content-Type" {
						continue
					}
					field(f.name, f.value)
				}
				if st == 0 {
					field("Content-Length", strconv.Itoa(len(v.body)))
				}
				field("Date", date)
				field("Etag", v.etag)
				b = append(b, "\r\n"...)
				head := len(b)
				if st == 0 {
					b = append(b, v.body...)
				}
				a.answers[vi][st][form] = pageAnswer{bytes: b, head: head}
			}
		}
	}
	return a
}
