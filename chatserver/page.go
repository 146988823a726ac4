package chatserver

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"net/http"
	"strconv"
	"strings"

	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// pageHTML is the chat page: one self-contained HTML file, its script and style
// inline, every URL in it relative.
//
//go:embed page.html
var pageHTML []byte

// pageCSP allows the page's own inline script (by hash) and style, and
// requests to this server only: an injected inline handler would not run
// even if some text ever reached the DOM as HTML.
var pageCSP = httpguard.PageCSP(pageHTML)

// pageGzip is the page compressed once, for the clients that accept gzip.
var pageGzip = func() []byte {
	var b bytes.Buffer
	z, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	z.Write(pageHTML)
	z.Close()
	return b.Bytes()
}()

// The page's response headers, built once: a request sets them without
// formatting, canonicalising or allocating anything (net/http only reads them).
var (
	pageHeaders = map[string][]string{
		"Content-Type":            {"text/html; charset=utf-8"},
		"Cache-Control":           {"no-cache"},
		"Content-Security-Policy": {pageCSP},
		"X-Content-Type-Options":  {"nosniff"},
		"Vary":                    {"Accept-Encoding"},
	}
	pageLen     = []string{strconv.Itoa(len(pageHTML))}
	pageGzipLen = []string{strconv.Itoa(len(pageGzip))}
	gzipName    = []string{"gzip"}
)

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodIs(w, r, http.MethodGet, http.MethodHead)
		return
	}
	h := w.Header()
	for k, v := range pageHeaders {
		h[k] = v
	}
	body := pageHTML
	if acceptsGzip(r) {
		body = pageGzip
		h["Content-Encoding"] = gzipName
		h["Content-Length"] = pageGzipLen
	} else {
		h["Content-Length"] = pageLen
	}
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}

// acceptsGzip reports whether the request's Accept-Encoding takes gzip
// (and does not refuse it with q=0).
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header["Accept-Encoding"] {
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
