package chatserver

import "github.com/wasmgap/wasmgap/chatserver/internal/room"

// handlePost stores and delivers a post (the machine's rules), unless the
// store is full.
func (h *hub) handlePost(tx *wtx, p Post) (result, error) {
	if used := h.store.used(); used >= h.maxBytes {
		return result{}, refuse(ErrStoreFull, "chat store full: it holds %d bytes, the most allowed is %d; old history is pruned after the retention (%v), retry later", used, h.maxBytes, h.retention)
	}
	out, err := h.apply(tx, room.Request{Kind: room.Post, Nick: p.From, To: p.To, Text: p.Text, Addr: p.addr, Sent: p.Time})
	return result{offline: out.Offline}, err
}
