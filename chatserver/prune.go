package chatserver

import (
	"github.com/wasmgap/wasmgap/chatserver/internal/room"
	"github.com/wasmgap/wasmgap/chatserver/internal/store"
)

// prune deletes the history and the offline messages older than the
// retention. It checkpoints first, so that everything is in chat.db, and
// deletes there in steps of 10,000 events, each one synced bbolt
// transaction (no log needed: nothing is answered meanwhile).
func (h *hub) prune() {
	if h.retention <= 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	cutoff := h.now().Add(-h.retention)
	h.syncer.Drain()
	if err := h.store.Checkpoint(); err != nil {
		h.log.Error("store checkpoint", "err", err)
		return
	}
	for {
		n, last, err := h.store.Prune(cutoff, 10000)
		if err != nil {
			h.log.Error("prune history", "err", err)
			return
		}
		if last > 0 {
			h.pruned.Store(last)
		}
		if n < 10000 {
			break
		}
	}
	h.process([]request{&tickReq{}}) // the mail past the retention leaves
	if err := h.store.Measure(); err != nil {
		h.log.Error("store size", "err", err)
	}
}

// tickReq tells the machine the time: the mails past the retention leave.
type tickReq struct{ reply }

func (r *tickReq) apply(h *hub, tx *store.Tx) (result, error) {
	_, err := h.apply(tx, room.Request{Kind: room.Tick})
	return result{}, err
}
