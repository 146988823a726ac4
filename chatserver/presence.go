package chatserver

import (
	"fmt"
	"slices"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/store"
)

// Presence: who is online, joins, leaves and the leave grace.

// user is a nickname that is online: it has open streams, or it lost its
// last one less than the leave grace ago.
type user struct {
	conns    map[*conn]struct{}
	graceGen uint64
}

// joined tells a new stream what to write before its queue: a notice about
// its resume id when there is one to give, the stored events it missed
// (resume < id <= replayTo, when hasResume), the welcome lines, then the
// waiting private messages (mailFrom < id <= mailTo).
type joined struct {
	resume    uint64
	hasResume bool
	notice    string
	replayTo  uint64
	preamble  []*event
	mailFrom  uint64
	mailTo    uint64
	// mailPending: offline messages this stream writes (in the replay or
	// the mail range) wait in the mailbox until their delivery is known.
	mailPending bool
}

// seenFrom is the id after which the stream has written every event of its
// user once it wrote through mailTo: its resume id, or the sequence at its
// login (no offline message has an id between that and mailFrom).
func (j *joined) seenFrom() uint64 {
	if j.hasResume {
		return j.resume
	}
	return j.replayTo
}

// handleJoin adds a stream: the welcome lines, the waiting offline
// messages, and "has joined." for the others when the user was offline.
func (h *hub) handleJoin(tx *store.Tx, r *joinReq) (result, error) {
	nick, c := r.conn.nick, r.conn
	if h.closing.Load() {
		return result{}, ErrShuttingDown
	}
	u := h.users[nick]
	wasOnline := u != nil
	if !wasOnline && len(h.presNicks) > 0 && h.presKind == presenceLeave {
		// Leaves from before this login are told to those who were there.
		if err := h.flushPresence(tx); err != nil {
			return result{}, err
		}
	}
	// A resume id is the client's claim about what it saw, never an input to
	// the sequence: one above the last id issued cannot have been seen here
	// (a store that was reset, or a forged id), so nothing was missed.
	j := joined{resume: r.resume, hasResume: r.hasResume, replayTo: h.seq}
	if r.hasResume && r.resume > h.seq {
		j.resume, j.hasResume = 0, false
		j.notice = fmt.Sprintf("resume id %d is above the last event id issued here (%d): nothing was missed; the ids of this stream start again below it", r.resume, h.seq)
	}

	// Who is online: every name when there are few, else the count and
	// maxOnlineShown of them (any, sorted), so a login costs the same at
	// 10,000 users as at 10.
	total := len(h.users)
	if u != nil && len(u.conns) == 0 {
		total-- // nick itself, back within its leave grace
	}
	online := make([]string, 0, min(total, maxOnlineShown))
	for n, ou := range h.users {
		if len(online) == maxOnlineShown {
			break
		}
		if n != nick || len(ou.conns) > 0 {
			online = append(online, n)
		}
	}
	slices.Sort(online)
	h.seq++
	j.preamble = append(j.preamble, newEvent(h.seq, welcomeText(nick)))
	h.seq++
	j.preamble = append(j.preamble, newEvent(h.seq, onlineText(online, total)))

	j.mailFrom = h.seq
	if h.mailboxes[nick] > 0 {
		if err := h.offerMail(tx, nick, &j); err != nil {
			return result{}, err
		}
	}
	j.mailTo = h.seq

	if u == nil {
		u = &user{conns: map[*conn]struct{}{}}
		h.users[nick] = u
	}
	u.conns[c] = struct{}{}
	u.graceGen++ // a pending grace timer no longer applies
	if !wasOnline {
		if err := h.announce(tx, presenceJoin, nick); err != nil {
			return result{}, err
		}
	}
	return result{joined: j}, nil
}

// handleLeave removes a stream that ended; the user's last one starts the
// leave grace (or leaves at once without one).
func (h *hub) handleLeave(tx *store.Tx, c *conn) error {
	u := h.users[c.nick]
	if u == nil {
		return nil
	}
	if _, ok := u.conns[c]; !ok {
		return nil
	}
	delete(u.conns, c)
	h.cut(c, cutClosed)
	if len(u.conns) > 0 {
		return nil
	}
	if h.closing.Load() {
		delete(h.users, c.nick)
		return nil
	}
	if h.grace <= 0 {
		return h.goOffline(tx, c.nick)
	}
	u.graceGen++
	gen, nick := u.graceGen, c.nick
	h.after = append(h.after, func() {
		time.AfterFunc(h.grace, func() {
			select {
			case h.reqs <- &graceReq{nick: nick, gen: gen}:
			case <-h.quit:
			}
		})
	})
	return nil
}

// graceOver takes nick offline when its leave grace gen ran out with no
// stream back.
func (h *hub) graceOver(tx *store.Tx, nick string, gen uint64) error {
	if u := h.users[nick]; u != nil && len(u.conns) == 0 && u.graceGen == gen {
		return h.goOffline(tx, nick)
	}
	return nil
}

// cutAll closes every stream with reason.
func (h *hub) cutAll(reason string) {
	for _, u := range h.users {
		for c := range u.conns {
			h.cut(c, reason)
		}
	}
}

func (h *hub) goOffline(tx *store.Tx, nick string) error {
	delete(h.users, nick)
	return h.announce(tx, presenceLeave, nick)
}

// Presence notices coalesce: a join or leave with no notice in the last
// window (PresenceWindow, one more per 1,000 users online) is told at once, as in the article ("X has joined."); the
// ones that follow within the window wait and are told together at its end
// ("A, B and 312 others joined."), so N logins cost N/window notices, not
// N² deliveries. Waiting notices are told before any other event (a post,
// a notice of the other kind), so nobody hears from a user before hearing
// that it joined.
const (
	presenceJoin = iota
	presenceLeave
)

// maxOnlineShown is how many names a welcome's "now online" lists at most.
const maxOnlineShown = 50

// announce tells everyone that nick joined or left, now or at the end of
// the presence window.
func (h *hub) announce(tx *store.Tx, kind int, nick string) error {
	if len(h.presNicks) > 0 && h.presKind != kind {
		if err := h.flushPresence(tx); err != nil {
			return err
		}
	}
	now := h.now()
	// The window grows with the room (one PresenceWindow per 1,000 users
	// online), so that telling a storm of logins to everyone costs the same
	// share of the hub at 10,000 users as at 1,000.
	win := h.presWindow * time.Duration(max(1, len(h.users)/1000))
	if h.presWindow <= 0 || len(h.presNicks) == 0 && now.Sub(h.presLast) >= win {
		h.presKind, h.presNicks = kind, append(h.presNicks[:0], nick)
		return h.flushPresence(tx)
	}
	h.presKind = kind
	h.presNicks = append(h.presNicks, nick)
	if !h.presTimer {
		h.presTimer = true
		wait := win - now.Sub(h.presLast)
		time.AfterFunc(max(wait, 0), func() {
			select {
			case h.reqs <- &presenceReq{}:
			case <-h.quit:
			}
		})
	}
	return nil
}

// flushPresence tells the waiting presence notices, in one event.
func (h *hub) flushPresence(tx *store.Tx) error {
	n := len(h.presNicks)
	if n == 0 {
		return nil
	}
	var text, except string
	if n == 1 {
		except = h.presNicks[0]
		if h.presKind == presenceJoin {
			text = joinedText(except)
		} else {
			text = leftText(except)
		}
	} else {
		text = manyText(h.presNicks, h.presKind == presenceJoin)
	}
	clear(h.presNicks)
	h.presNicks = h.presNicks[:0]
	if cap(h.presNicks) > 1024 {
		h.presNicks = nil
	}
	h.presLast = h.now()
	ev, err := h.record(tx, "", except, text)
	if err != nil {
		return err
	}
	h.toAll(except, ev)
	return nil
}
