package chatserver

import (
	"github.com/wasmgap/wasmgap/chatserver/internal/room"
	"github.com/wasmgap/wasmgap/chatserver/internal/store"
)

// handlePost stores and delivers a post (the machine's rules), unless the
// store is full.
func (h *hub) handlePost(tx *store.Tx, p Post) (result, error) {
	if used := h.store.Used(); used >= h.maxBytes {
		return result{}, refuse(ErrStoreFull, "chat store full: it holds %d bytes, the most allowed is %d; old history is pruned after the retention (%v), retry later", used, h.maxBytes, h.retention)
	}
	out, err := h.apply(tx, room.Request{Kind: room.Post, Nick: p.From, To: p.To, Text: p.Text, Addr: p.Addr, Sent: p.Time})
	return result{offline: out.Offline}, err
}
