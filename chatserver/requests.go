package chatserver

import (
	"github.com/wasmgap/wasmgap/chatserver/internal/room"
	"github.com/wasmgap/wasmgap/chatserver/internal/store"
	"github.com/wasmgap/wasmgap/chatserver/internal/stream"
)

// request is one thing the hub does for a caller, inside the
// store transaction of its batch. There is one type per kind.
type request interface {
	// apply does it. An error of a refusal kind (refusesOne) refuses this
	// request alone; any other fails, and rolls back, the whole batch.
	apply(h *hub, tx *store.Tx) (result, error)
	// replyTo is where the hub sends the result.
	replyTo() *reply
}

// result is what the hub answers a request with.
type result struct {
	offline bool        // postReq: the receiver was offline, the message waits in its mailbox
	joined  stream.Plan // joinReq: what the new stream writes first
	err     error
}

// reply is the part every request shares: where its result goes, a channel
// that submit makes or, for a caller that does not wait, then (run by the
// store's syncer or the hub: it must not block or wait for the hub).
type reply struct {
	ch   chan result
	then func(result)
}

func (r *reply) replyTo() *reply { return r }

func (r *reply) answer(res result) {
	if r.then != nil {
		r.then(res)
	} else if r.ch != nil {
		r.ch <- res
	}
}

// goesAhead reports whether r's answer shows nothing stored, and goes before
// any sync once the ids it shows are safe: a leave's, or a login's that
// replays nothing (no resume, no mail; its "has joined." is the others').
func goesAhead(r request, res result) bool {
	switch r.(type) {
	case *leaveReq:
		return true
	case *joinReq:
		j := res.joined
		return res.err == nil && !j.HasResume && j.MailFrom == j.MailTo
	}
	return false
}

// postReq stores and delivers a post.
type postReq struct {
	reply
	msg message
}

func (r *postReq) apply(h *hub, tx *store.Tx) (result, error) { return h.handlePost(tx, r.msg) }

// joinReq adds a stream of its nick; resume is the last id its client saw.
type joinReq struct {
	reply
	conn      *stream.Conn
	resume    uint64
	hasResume bool
}

func (r *joinReq) apply(h *hub, tx *store.Tx) (result, error) { return h.handleJoin(tx, r) }

// leaveReq removes a stream that ended.
type leaveReq struct {
	reply
	conn *stream.Conn
}

func (r *leaveReq) apply(h *hub, tx *store.Tx) (result, error) {
	return result{}, h.handleLeave(tx, r.conn)
}

// graceReq ends the leave grace of nick, unless a stream came back since
// (gen is the grace it belongs to).
type graceReq struct {
	reply
	nick string
	gen  uint64
}

func (r *graceReq) apply(h *hub, tx *store.Tx) (result, error) {
	return result{}, h.graceOver(tx, r.nick, r.gen)
}

// presenceReq tells the presence notices that waited for the end of their window.
type presenceReq struct{ reply }

func (r *presenceReq) apply(h *hub, tx *store.Tx) (result, error) {
	return result{}, h.flushPresence(tx)
}

// cutAllReq closes every stream, telling each the reason.
type cutAllReq struct {
	reply
	reason string
}

func (r *cutAllReq) apply(h *hub, _ *store.Tx) (result, error) {
	h.cutAll(r.reason)
	return result{}, nil
}

// ackReq says nick's events with from < id <= to were delivered: the
// offline messages among them leave the mailbox.
type ackReq struct {
	reply
	nick     string
	from, to uint64
}

func (r *ackReq) apply(h *hub, tx *store.Tx) (result, error) {
	return result{}, h.handleAck(tx, r.nick, r.from, r.to)
}

// claimReq stores nick's claim as the hub's claims hold it now (none:
// deleted): the claims save each change this way.
type claimReq struct {
	reply
	nick string
}

func (r *claimReq) apply(h *hub, tx *store.Tx) (result, error) {
	return result{}, h.claims.Store(tx, r.nick)
}

// handlePost stores and delivers a post (the machine's rules), unless the
// store is full.
func (h *hub) handlePost(tx *store.Tx, p message) (result, error) {
	if used := h.store.Used(); used >= h.maxBytes {
		return result{}, refuse(ErrStoreFull, "chat store full: it holds %d bytes, the most allowed is %d; old history is pruned after the retention (%v), retry later", used, h.maxBytes, h.retention)
	}
	out, err := h.apply(tx, room.Request{Kind: room.Post, Nick: p.From, To: p.To, Text: p.Text, Addr: p.Addr, Sent: p.Time})
	return result{offline: out.Offline}, err
}

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
