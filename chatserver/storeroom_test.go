package chatserver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/chatserver/internal/store"
)

// TestStoreErrorsStatus checks the answer to a send whose batch the store
// refused, as the hub wraps the store's error: a full disk (no room for
// the log's record or for the next checkpoint) is 507, like a full store;
// another failure of the store is the server's (500).
func TestStoreErrorsStatus(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{fmt.Errorf("store: %w", fmt.Errorf("%w: chat.db needs 1 MiB", store.ErrNoRoom)), http.StatusInsufficientStorage},
		{refuse(ErrStoreFull, "chat store full"), http.StatusInsufficientStorage},
		{fmt.Errorf("store: %w", fmt.Errorf("sync log: input/output error")), 0},
	} {
		if got := statusOf(c.err); got != c.want {
			t.Errorf("statusOf(%q) = %d, want %d", c.err, got, c.want)
		}
	}
}

// TestFailureAnswersNameNoFile: a send or login that failed in the store
// (a full disk, a failed sync) is answered without the store's files: the
// whole error, with its paths, is the server's log's (issue 49, item 8).
func TestFailureAnswersNameNoFile(t *testing.T) {
	ts := startServer(t, Options{})
	const path = "/srv/secret-place/chat.wal"
	for _, err := range []error{
		fmt.Errorf("store: %w", fmt.Errorf("%w: write log %s: no space left on device", store.ErrNoRoom, path)),
		fmt.Errorf("store: %w", fmt.Errorf("sync log %s: input/output error", path)),
	} {
		status, e := ts.srv.published(message{From: "mary", To: "bob", Text: "x"}, result{err: err})
		for _, asJSON := range []bool{false, true} {
			w := httptest.NewRecorder()
			ts.srv.sendError(w, status, e, asJSON)
			if body := w.Body.String(); w.Code < 500 || strings.Contains(body, "secret-place") || !strings.Contains(body, "retry") {
				t.Errorf("a send failed with %q: %d %q, want 5xx without the file, saying to retry", err, w.Code, body)
			}
		}
		if text := answerText(status, e); strings.Contains(text, "secret-place") {
			t.Errorf("the fast path's answer to %q: %q", err, text)
		}
	}
}
