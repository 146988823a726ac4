// Package ndjson streams an HTTP response as newline-delimited JSON: one value per line,
// each flushed to the client as soon as it is written, so that a page reads progress as
// it happens. The playground's runs and the load panel's runs answer this way.
package ndjson

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
)

// ContentType is the media type of the stream.
const ContentType = "application/x-ndjson; charset=utf-8"

// Stream writes JSON lines to one response. It is safe for concurrent use: each value is
// written whole, never interleaved with another.
type Stream struct {
	mu  sync.Mutex
	w   http.ResponseWriter
	rc  *http.ResponseController
	err error
}

// Start answers 200 with the stream's headers (not cached, not buffered by a proxy, not
// sniffed as another type) and returns the stream to write the values to.
func Start(w http.ResponseWriter) *Stream {
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	return &Stream{w: w, rc: http.NewResponseController(w)}
}

// Send writes v as one line (HTML characters not escaped) and flushes it. After the first
// failed write (the client is gone) it writes nothing more and returns that error.
func (s *Stream) Send(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if _, err := s.w.Write(buf.Bytes()); err != nil {
		s.err = err
		return err
	}
	if err := s.rc.Flush(); err != nil {
		s.err = err
	}
	return s.err
}
