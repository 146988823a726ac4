package chatserver

import "github.com/wasmgap/wasmgap/chatserver/internal/store"

// handlePost stores and delivers a post: to all, to an online user (and the
// echo to its sender), or into an offline user's mailbox.
func (h *hub) handlePost(tx *store.Tx, p Post) (result, error) {
	if used := h.store.Used(); used >= h.maxBytes {
		return result{}, refuse(ErrStoreFull, "chat store full: it holds %d bytes, the most allowed is %d; old history is pruned after the retention (%v), retry later", used, h.maxBytes, h.retention)
	}
	if p.To == "all" {
		ev, err := h.record(tx, "", "", toAllText(p.From, p.Text))
		if err != nil {
			return result{}, err
		}
		h.toAll("", ev)
		return result{}, nil
	}
	target := h.users[p.To]
	if target == nil {
		if h.mailboxes[p.To] == 0 && len(h.mailboxes) >= h.maxBoxes {
			return result{}, refuse(ErrStoreFull, "chat store full: %d offline users already have messages waiting, the most kept; %s's message was not stored, retry once they logged in or their messages expired (retention %v)", len(h.mailboxes), p.To, h.retention)
		}
		if h.mailboxes[p.To] >= h.maxMailbox {
			return result{}, refuse(ErrMailboxFull, "mailbox full: %s is offline and already has %d messages waiting, the most kept per user", p.To, h.maxMailbox)
		}
		m := &store.Mail{From: p.From, Text: p.Text, Time: p.Time.UnixNano()}
		if err := store.AddMail(tx, p.To, m); err != nil {
			return result{}, err
		}
		h.setMailbox(tx, p.To, h.mailboxes[p.To]+1)
		ev, err := h.record(tx, p.From, "", offlineEchoText(p.To, p.Text))
		if err != nil {
			return result{}, err
		}
		h.toUser(p.From, ev)
		return result{offline: true}, nil
	}
	if p.To != p.From {
		ev, err := h.record(tx, p.To, "", privateText(p.From, p.Text))
		if err != nil {
			return result{}, err
		}
		h.toUser(p.To, ev)
		if len(target.conns) == 0 && h.mailboxes[p.To] < h.maxMailbox && (h.mailboxes[p.To] > 0 || len(h.mailboxes) < h.maxBoxes) {
			// Within the leave grace: a resume replays the event, a fresh
			// login gets it from the mailbox instead.
			if err := store.AddMail(tx, p.To, &store.Mail{Orig: ev.id, From: p.From, Text: p.Text, Time: p.Time.UnixNano()}); err != nil {
				return result{}, err
			}
			h.setMailbox(tx, p.To, h.mailboxes[p.To]+1)
		}
	}
	ev, err := h.record(tx, p.From, "", echoText(p.To, p.Text))
	if err != nil {
		return result{}, err
	}
	h.toUser(p.From, ev)
	return result{}, nil
}
