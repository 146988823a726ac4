package chatserver

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"

	"github.com/wasmgap/wasmgap/chatserver/internal/page"
)

// TestPageVariants: the page is the same bytes plain and gzipped, with its
// headers, and HEAD has the headers only.
func TestPageVariants(t *testing.T) {
	ts := startServer(t, Options{})
	tr := &http.Transport{DisableCompression: true}
	for _, c := range []struct{ method, enc, wantEnc string }{
		{"GET", "", ""}, {"GET", "gzip, deflate, br", "gzip"}, {"GET", "gzip;q=0, identity", ""},
		{"HEAD", "gzip", "gzip"}, {"HEAD", "", ""},
	} {
		req, _ := http.NewRequest(c.method, ts.url+"/", nil)
		if c.enc != "" {
			req.Header.Set("Accept-Encoding", c.enc)
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != 200 || h.Get("Content-Encoding") != c.wantEnc || h.Get("Content-Security-Policy") != page.CSP ||
			h.Get("Content-Type") != "text/html; charset=utf-8" || h.Get("Vary") != "Accept-Encoding" {
			t.Fatalf("%s / with Accept-Encoding %q: %s %v", c.method, c.enc, resp.Status, h)
		}
		if c.method == "HEAD" {
			if len(body) != 0 {
				t.Fatalf("HEAD has a body of %d bytes", len(body))
			}
			continue
		}
		if c.wantEnc == "gzip" {
			z, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			body, _ = io.ReadAll(z)
		}
		if !bytes.Equal(body, page.HTML) {
			t.Fatalf("%s / with Accept-Encoding %q: the body is not the page", c.method, c.enc)
		}
	}
	if status, _ := ts.do(t, "POST", "/", ""); status != http.StatusMethodNotAllowed {
		t.Fatalf("POST /: %d", status)
	}
}
