package stream

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Plan tells a new stream what to write before its queue: a notice about
// its resume id when there is one to give, the stored events it missed
// (resume < id <= replayTo, when hasResume), the welcome lines, then the
// waiting private messages (mailFrom < id <= mailTo).
type Plan struct {
	Resume    uint64
	HasResume bool
	Notice    string
	ReplayTo  uint64
	Preamble  []*Event
	MailFrom  uint64
	MailTo    uint64
	// MailPending: offline messages this stream writes (in the replay or
	// the mail range) wait in the mailbox until their delivery is known.
	MailPending bool
}

// SeenFrom is the id after which the stream has written every event of its
// user once it wrote through mailTo: its resume id, or the sequence at its
// login (no offline message has an id between that and mailFrom).
func (j *Plan) SeenFrom() uint64 {
	if j.HasResume {
		return j.Resume
	}
	return j.ReplayTo
}

// Transport writes one stream's events: SSE or WebSocket.
type Transport interface {
	SetDeadline(t time.Time)
	Event(ev *Event) error // may buffer; flush sends
	Note(msg string) error // an error for the client
	Ping() error
	Flush() error
	End(reason string, shuttingDown bool) // the last words before closing
	// AskAck asks the client to confirm it received the events of its user
	// with from < id <= to. A transport that can (a WebSocket: the pong to a
	// ping sent after them) confirms them itself and returns false; true
	// leaves it to the pump (the stream staying open for MailAckDelay).
	AskAck(from, to uint64) (byDelay bool, err error)
}

// Host is what a stream's pump asks of the server it runs in.
type Host interface {
	// Pruned is the last event id pruned from the history: a resume from
	// before it may miss events.
	Pruned() uint64
	// Closing reports whether the server is shutting down.
	Closing() bool
	// Replay writes the stored events c's user can see with after < id <= upTo.
	Replay(c *Conn, after, upTo uint64, t Transport, deadline func()) error
	// Delivered says nick's events with from < id <= to reached the client.
	Delivered(nick string, from, to uint64)
}

// Timing is a pump's clock: WriteTimeout bounds each write, KeepAlive
// spaces the pings of an idle stream, MailAckDelay is how long an event
// stream must stay open after its offline messages before they count as
// read; Retention is named in the notice about pruned events.
type Timing struct {
	WriteTimeout, KeepAlive, MailAckDelay, Retention time.Duration
}

// Pump writes a stream: the notice, the missed events, the welcome lines,
// the waiting messages (j), then its live events and the notes for its
// client until the client goes, the stream is cut or ctx ends.
func Pump(ctx context.Context, c *Conn, j Plan, t Transport, notes <-chan string, h Host, tm Timing) error {
	// Every write is bounded by a deadline between 3/4 of WriteTimeout and
	// WriteTimeout away: moving it costs a timer update, which a broadcast
	// to 10,000 streams would pay 10,000 times (12% of the server's CPU in
	// a profile of ws-fanout), so it moves only when a quarter has passed.
	var until time.Time
	deadline := func() {
		now := time.Now()
		if until.Sub(now) < tm.WriteTimeout*3/4 {
			until = now.Add(tm.WriteTimeout)
			t.SetDeadline(until)
		}
	}
	resume, hasResume := j.Resume, j.HasResume
	if j.Notice != "" {
		deadline()
		if err := t.Note(j.Notice); err != nil {
			return err
		}
	}
	if pruned := h.Pruned(); hasResume && resume < pruned {
		deadline()
		if err := t.Note(fmt.Sprintf("events %d to %d are older than the retention window (%v) and were deleted: those addressed to you are missing from this resume", resume+1, pruned, tm.Retention)); err != nil {
			return err
		}
	}
	if hasResume {
		if err := h.Replay(c, resume, j.ReplayTo, t, deadline); err != nil {
			return err
		}
	}
	deadline()
	for _, ev := range j.Preamble {
		if err := t.Event(ev); err != nil {
			return err
		}
	}
	if err := h.Replay(c, j.MailFrom, j.MailTo, t, deadline); err != nil {
		return err
	}
	if err := t.Flush(); err != nil {
		return err
	}
	// Offline messages leave the mailbox once their delivery is known.
	var confirm <-chan time.Time
	ackFrom, ackTo := j.SeenFrom(), j.MailTo
	if j.MailPending {
		byDelay, err := t.AskAck(ackFrom, ackTo)
		if err != nil {
			return err
		}
		if byDelay {
			timer := time.NewTimer(tm.MailAckDelay)
			defer timer.Stop()
			confirm = timer.C
		}
	}
	tick := time.NewTicker(tm.KeepAlive)
	defer tick.Stop()
	var spare []*Event
	for {
		select {
		case <-c.Ready:
			evs := c.Take(spare)
			deadline()
			for _, ev := range evs {
				if err := t.Event(ev); err != nil {
					return err
				}
			}
			if err := t.Flush(); err != nil {
				return err
			}
			clear(evs)
			spare = evs
		case msg := <-notes:
			deadline()
			if err := t.Note(msg); err != nil {
				return err
			}
			if err := t.Flush(); err != nil {
				return err
			}
		case <-confirm:
			// Still open MailAckDelay after the flush, and a write after
			// that still goes through: the client read them.
			confirm = nil
			deadline()
			if err := t.Ping(); err != nil {
				return err
			}
			if ctx.Err() == nil {
				h.Delivered(c.Nick, ackFrom, ackTo)
			}
		case <-tick.C:
			deadline()
			if err := t.Ping(); err != nil {
				return err
			}
		case <-c.Gone:
			t.SetDeadline(time.Now().Add(time.Second))
			reason := c.CutReason()
			t.End(reason, h.Closing())
			return errors.New(reason)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
