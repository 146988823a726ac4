package chatserver

import "github.com/wasmgap/wasmgap/chatserver/internal/store"

// Mailbox policy: a private message to an offline user waits in its
// mailbox, is offered at each login, and leaves only once its delivery is
// known (see the package comment).

// offerMail gives nick's waiting messages to a new stream. A message the
// stream's resume id covers was delivered: it leaves the mailbox. One the
// replay carries stays as it is. Any other is stored again under a new id
// (ids of a stream only grow) in the mail range of j, its previous event
// deleted. All that are offered stay in the mailbox until their delivery is
// known (handleAck).
func (h *hub) offerMail(tx *store.Tx, nick string, j *joined) error {
	entries, err := store.ReadMail(tx, nick)
	if err != nil {
		return err
	}
	var delivered [][]byte
	for i := range entries {
		e := &entries[i]
		cur := e.Mail.EventID()
		if j.hasResume && cur != 0 && cur <= j.resume {
			delivered = append(delivered, e.Key)
			continue
		}
		j.mailPending = true
		if j.hasResume && cur > j.resume && cur <= j.replayTo {
			continue // the replay carries it
		}
		if cur != 0 {
			if err := store.DeleteRecord(tx, cur); err != nil {
				return err
			}
		}
		ev, err := h.record(tx, nick, "", offlineText(&e.Mail))
		if err != nil {
			return err
		}
		e.Mail.ID = ev.id
		if err := store.PutMail(tx, nick, e); err != nil {
			return err
		}
		h.toUser(nick, ev) // other streams of nick, if any
	}
	return h.dropMail(tx, nick, delivered)
}

// handleAck removes from nick's mailbox the messages whose current event has
// from < id <= to: a stream of nick is known to have delivered those.
func (h *hub) handleAck(tx *store.Tx, nick string, from, to uint64) error {
	if h.mailboxes[nick] == 0 {
		return nil
	}
	entries, err := store.ReadMail(tx, nick)
	if err != nil {
		return err
	}
	var delivered [][]byte
	for _, e := range entries {
		if id := e.Mail.EventID(); id > from && id <= to {
			delivered = append(delivered, e.Key)
		}
	}
	return h.dropMail(tx, nick, delivered)
}

// dropMail deletes delivered messages from nick's mailbox and counts them out.
func (h *hub) dropMail(tx *store.Tx, nick string, keys [][]byte) error {
	if len(keys) == 0 {
		return nil
	}
	left := h.mailboxes[nick] - len(keys)
	if err := store.DeleteMail(tx, nick, keys, left <= 0); err != nil {
		return err
	}
	h.setMailbox(tx, nick, left)
	return nil
}

// setMailbox counts n messages waiting for nick (at most 0: none), undone
// if the batch fails.
func (h *hub) setMailbox(tx *store.Tx, nick string, n int) {
	old, had := h.mailboxes[nick]
	tx.OnUndo(func() {
		if had {
			h.mailboxes[nick] = old
		} else {
			delete(h.mailboxes, nick)
		}
	})
	if n <= 0 {
		delete(h.mailboxes, nick)
	} else {
		h.mailboxes[nick] = n
	}
}
