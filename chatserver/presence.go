package chatserver

import (
	"fmt"

	"github.com/wasmgap/wasmgap/chatserver/internal/room"
	"github.com/wasmgap/wasmgap/chatserver/internal/store"
	"github.com/wasmgap/wasmgap/chatserver/internal/stream"
)

// Presence on one node: streams open and close through the machine, which
// keeps who is online, the leave grace and the coalesced notices.

// handleJoin adds a stream: the welcome lines, the waiting offline
// messages, and "has joined." for the others when the user was offline.
func (h *hub) handleJoin(tx *store.Tx, r *joinReq) (result, error) {
	if h.closing.Load() {
		return result{}, ErrShuttingDown
	}
	h.tokens++
	out, err := h.apply(tx, room.Request{Kind: room.Open, Nick: r.conn.Nick, Token: h.tokens, Resume: r.resume, HasResume: r.hasResume})
	if err != nil {
		return result{}, err
	}
	if out.Joined == nil {
		return result{}, fmt.Errorf("chat: the open of a stream of %s made no welcome", r.conn.Nick)
	}
	// Registered after its open's events: it writes them from the log.
	h.local.Add(r.conn, h.tokens)
	return result{joined: stream.PlanOf(out.Joined)}, nil
}

// handleLeave removes a stream that ended; the user's last one starts the
// leave grace (or leaves at once without one).
func (h *hub) handleLeave(tx *store.Tx, c *stream.Conn) error {
	token, ok := h.local.Remove(c)
	if !ok {
		return nil
	}
	c.Cut(stream.Closed)
	if h.closing.Load() {
		return nil // shutting down: nobody is told
	}
	_, err := h.apply(tx, room.Request{Kind: room.Close, Nick: c.Nick, Token: token})
	return err
}

// graceOver takes nick offline when its leave grace gen ran out with no
// stream back.
func (h *hub) graceOver(tx *store.Tx, nick string, gen uint64) error {
	_, err := h.apply(tx, room.Request{Kind: room.GraceOver, Nick: nick, Gen: gen})
	return err
}

// flushPresence tells the presence notices that waited for their window.
func (h *hub) flushPresence(tx *store.Tx) error {
	_, err := h.apply(tx, room.Request{Kind: room.Flush})
	return err
}

// cutAll closes every stream with reason.
func (h *hub) cutAll(reason string) {
	for c := range h.local.To("", "") {
		c.Cut(reason)
	}
}
