package chatserver

import (
	"github.com/wasmgap/wasmgap/chatserver/internal/room"
	"github.com/wasmgap/wasmgap/chatserver/internal/store"
)

// Mailboxes on one node: the machine keeps them (and their limits) and the
// store keeps a copy, each mail under its machine key, so that a restart
// reads them back (newHub). A mail leaves only once its delivery is known
// (see the package comment).

// handleAck removes from nick's mailbox the messages whose current event has
// from < id <= to: a stream of nick is known to have delivered those.
func (h *hub) handleAck(tx *store.Tx, nick string, from, to uint64) error {
	if h.m.MailCount(nick) == 0 {
		return nil
	}
	_, err := h.apply(tx, room.Request{Kind: room.Ack, Nick: nick, From: from, Upto: to})
	return err
}

// writeMail stores one change of a mailbox.
func (h *hub) writeMail(tx *store.Tx, mc room.MailChange) error {
	if mc.Drop {
		return store.DeleteMail(tx, mc.Nick, [][]byte{store.IDKey(mc.Mail.Key)}, h.m.MailCount(mc.Nick) == 0)
	}
	m := &store.MailEntry{Key: store.IDKey(mc.Mail.Key), Mail: store.Mail{Orig: mc.Mail.Orig, ID: mc.Mail.ID, From: mc.Mail.From,
		Addr: mc.Mail.Addr, Text: mc.Mail.Text, Time: mc.Mail.Sent.UnixNano()}}
	return store.PutMail(tx, mc.Nick, m)
}
