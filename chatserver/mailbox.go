package chatserver

import "github.com/wasmgap/wasmgap/chatserver/internal/room"

// Mailboxes on one node: the machine keeps them (and their limits) and the
// store keeps a copy, each mail under its machine key, so that a restart
// reads them back (newHub). A mail leaves only once its delivery is known
// (see the package comment).

// handleAck removes from nick's mailbox the messages whose current event has
// from < id <= to: a stream of nick is known to have delivered those.
func (h *hub) handleAck(tx *wtx, nick string, from, to uint64) error {
	if h.m.MailCount(nick) == 0 {
		return nil
	}
	_, err := h.apply(tx, room.Request{Kind: room.Ack, Nick: nick, From: from, Upto: to})
	return err
}

// writeMail stores one change of a mailbox.
func (h *hub) writeMail(tx *wtx, mc room.MailChange) error {
	if mc.Drop {
		return deleteMail(tx, mc.Nick, [][]byte{idKey(mc.Mail.Key)}, h.m.MailCount(mc.Nick) == 0)
	}
	m := &mailEntry{key: idKey(mc.Mail.Key), m: mail{Orig: mc.Mail.Orig, ID: mc.Mail.ID, From: mc.Mail.From,
		Addr: mc.Mail.Addr, Text: mc.Mail.Text, Time: mc.Mail.Sent.UnixNano()}}
	return putMail(tx, mc.Nick, m)
}
