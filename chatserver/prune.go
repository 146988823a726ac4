package chatserver

import (
	"time"
)

// prune deletes the history and the offline messages older than the
// retention, in steps of 10,000 events (one transaction each).
func (h *hub) prune() {
	if h.retention <= 0 {
		return
	}
	cutoff := h.now().Add(-h.retention)
	h.drain() // prune writes and syncs the log itself, then checkpoints
	for {
		var n int
		var last uint64
		err := guarded(func() error {
			return h.store.update(func(tx *wtx) (err error) {
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
	h.pruneMail(cutoff)
	if err := h.store.checkpoint(); err != nil {
		h.log.Error("store checkpoint", "err", err)
	}
}

// pruneMail deletes offline messages sent before cutoff: a mailbox keeps a
// message as long as the history keeps events.
func (h *hub) pruneMail(cutoff time.Time) {
	var left map[string]int
	err := guarded(func() error {
		return h.store.update(func(tx *wtx) (err error) {
			left, err = pruneMail(tx, cutoff)
			return err
		})
	})
	if err != nil {
		h.log.Error("prune mailboxes", "err", err)
		return
	}
	for nick, n := range left {
		if n == 0 {
			delete(h.mailboxes, nick)
		} else {
			h.mailboxes[nick] = n
		}
	}
}
