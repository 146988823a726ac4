package chatserver

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"net/http"
	"strconv"
)

// pageHTML is the chat page: one self-contained HTML file, its script and style
// inline, every URL in it relative.
//
//go:embed page.html
var pageHTML []byte

// pageCSP allows the page's own inline script (by hash) and style, and
// requests to this server only: an injected inline handler would not run
// even if some text ever reached the DOM as HTML.
var pageCSP = func() string {
	start := bytes.Index(pageHTML, []byte("<script>")) + len("<script>")
	end := bytes.Index(pageHTML, []byte("</script>"))
	sum := sha256.Sum256(pageHTML[start:end])
	return "default-src 'none'; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
}()

var pageLen = strconv.Itoa(len(pageHTML))

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	if !methodIs(w, r, http.MethodGet, http.MethodHead) {
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", pageLen)
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Method == http.MethodHead {
		return
	}
	w.Write(pageHTML)
}
