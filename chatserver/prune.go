package chatserver

import (
	bolt "go.etcd.io/bbolt"

	"github.com/wasmgap/wasmgap/chatserver/internal/room"
)

// prune deletes the history and the offline messages older than the
// retention. It checkpoints first, so that everything is in chat.db, and
// deletes there in steps of 10,000 events, each one synced bbolt
// transaction (no log needed: nothing is answered meanwhile).
func (h *hub) prune() {
	if h.retention <= 0 {
		return
	}
	cutoff := h.now().Add(-h.retention)
	h.drain()
	if err := h.store.checkpoint(); err != nil {
		h.log.Error("store checkpoint", "err", err)
		return
	}
	for {
		var n int
		var last uint64
		var due bool
		err := guarded(func() error {
			// Looked at first, so that an idle prune writes nothing.
			if err := h.store.db.View(func(tx *bolt.Tx) (err error) {
				due, err = pruneDue(tx, cutoff)
				return err
			}); err != nil || !due {
				return err
			}
			return h.store.db.Update(func(tx *bolt.Tx) (err error) {
				n, last, err = prune(tx, cutoff, 10000)
				return err
			})
		})
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
	if err := h.store.measure(); err != nil {
		h.log.Error("store size", "err", err)
	}
}

// tickReq tells the machine the time: the mails past the retention leave.
type tickReq struct{ reply }

func (r *tickReq) apply(h *hub, tx *wtx) (result, error) {
	_, err := h.apply(tx, room.Request{Kind: room.Tick})
	return result{}, err
}
