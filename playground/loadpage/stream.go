package loadpage

import (
	"encoding/json"
	"net/http"
	"sync"
)

// stream writes StreamEvents as NDJSON, one line each, flushed as it is written so that the
// page sees progress while the run goes. Progress comes from the generator's goroutine and the
// report from the handler's: send may be called from both.
type stream struct {
	mu  sync.Mutex
	w   http.ResponseWriter
	rc  *http.ResponseController
	enc *json.Encoder
}

// newStream sets the stream's headers; nothing is written before the first event.
func newStream(w http.ResponseWriter) *stream {
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	return &stream{w: w, rc: http.NewResponseController(w), enc: json.NewEncoder(w)}
}

// send writes one event and flushes it. A client that has gone away is not an error here: the
// run's context ends it.
func (s *stream) send(ev StreamEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.enc.Encode(ev)
	_ = s.rc.Flush()
}
