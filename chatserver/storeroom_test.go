package chatserver

import (
	"fmt"
	"net/http"
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
