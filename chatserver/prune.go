package chatserver

import "time"

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
	h.pruneMail(cutoff)
	if err := h.store.Measure(); err != nil {
		h.log.Error("store size", "err", err)
	}
}

// pruneMail deletes offline messages sent before cutoff: a mailbox keeps a
// message as long as the history keeps events.
func (h *hub) pruneMail(cutoff time.Time) {
	left, err := h.store.PruneMail(cutoff)
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
