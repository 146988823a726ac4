package playground

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/wasmgap/wasmgap/web"
)

// manifest is the page's web.Manifest, with the server's questions about it.
type manifest web.Manifest

// static serves the built page.
type static struct {
	dist fs.FS
	// cache holds immutable (content-hashed) files, read and compressed once.
	cache sync.Map // name → *asset
}

// asset is one file ready to serve.
type asset struct {
	body, gzipped []byte
	etag          string
	ctype         string
	immutable     bool
}

func newStatic(dist fs.FS) *static { return &static{dist: dist} }

// readManifest reads the manifest, or says that the bundle is not built.
func (s *static) readManifest() (*manifest, error) {
	b, err := fs.ReadFile(s.dist, "manifest.json")
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// hashed reports whether name is one of the manifest's content-hashed files or their maps.
func (m *manifest) hashed(name string) bool {
	base := strings.TrimSuffix(name, ".map")
	for _, f := range m.Files {
		if f == base {
			return true
		}
	}
	return false
}

func (s *static) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, r.Method+" is not allowed here: the page's files are read with GET", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
	if name == "" {
		name = "index.html"
	}
	m, err := s.readManifest()
	if err != nil {
		if name == "index.html" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusOK)
			_ = notBuiltPage.Execute(w, err.Error())
			return
		}
		http.Error(w, "not found: the page bundle is not built (run `go tool task build`)", http.StatusNotFound)
		return
	}
	if name == "manifest.json" || name == "placeholder" {
		http.NotFound(w, r)
		return
	}
	a, err := s.asset(m, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			http.NotFound(w, r)
			return
		}
		http.Error(w, "read "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("ETag", a.etag)
	if a.immutable {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	if a.gzipped != nil {
		h.Add("Vary", "Accept-Encoding")
	}
	if match := r.Header.Get("If-None-Match"); match != "" && match == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if a.gzipped != nil && acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = a.gzipped
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// asset reads a file of dist, from the cache when it is content-hashed.
func (s *static) asset(m *manifest, name string) (*asset, error) {
	immutable := m.hashed(name)
	if immutable {
		if a, ok := s.cache.Load(name); ok {
			return a.(*asset), nil
		}
	}
	body, err := fs.ReadFile(s.dist, name)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	a := &asset{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ctype: contentType(name), immutable: immutable}
	if compressible(a.ctype) && len(body) > 512 {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(body)
		if err := zw.Close(); err == nil && buf.Len() < len(body) {
			a.gzipped = buf.Bytes()
		}
	}
	if immutable {
		s.cache.Store(name, a)
	}
	return a, nil
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".map", ".json":
		return "application/json; charset=utf-8"
	case ".wasm":
		return "application/wasm"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || strings.HasPrefix(ctype, "application/json") ||
		ctype == "application/wasm" || strings.HasPrefix(ctype, "image/svg")
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(coding) != "gzip" && strings.TrimSpace(coding) != "*" {
			continue
		}
		if q, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// notBuiltPage is the page served when the binary holds no bundle.
var notBuiltPage = template.Must(template.New("not-built").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>wasmgap playground: page not built</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}
code{background:#8882;padding:.1em .3em;border-radius:4px}</style></head>
<body><h1>The playground page is not built</h1>
<p>This server holds no page bundle. Build it, then start the server again:</p>
<pre><code>go tool task build</code></pre>
<p>(<code>go tool task</code> builds what changed and serves.) The API works already:
<a href="/api/kernels">/api/kernels</a>.</p>
<p><small>{{.}}</small></p>
</body></html>
`))
