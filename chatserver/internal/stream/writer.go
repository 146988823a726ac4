package stream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/room"
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

// PlanOf is the rules' answer to an open as a stream writes it.
func PlanOf(rj *room.Joined) Plan {
	j := Plan{Resume: rj.Resume, HasResume: rj.HasResume, Notice: rj.Notice, ReplayTo: rj.ReplayTo,
		MailFrom: rj.MailFrom, MailTo: rj.MailTo, MailPending: rj.MailPending}
	for _, e := range rj.Preamble {
		j.Preamble = append(j.Preamble, NewEvent(e.ID, e.Text))
	}
	return j
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
	// leaves it to the writer (the stream staying open for MailAckDelay).
	AskAck(from, to uint64) (byDelay bool, err error)
}

// Host is what a stream's writer asks of the server it runs in.
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
	// Loops are the server's writer loops; nil: none, each stream's
	// writes run on a goroutine of its own.
	Loops() *Loops
}

// Timing is a stream writer's clock: WriteTimeout bounds each write, KeepAlive
// spaces the pings of an idle stream, MailAckDelay is how long an event
// stream must stay open after its offline messages before they count as
// read; Retention is named in the notice about pruned events.
type Timing struct {
	WriteTimeout, KeepAlive, MailAckDelay, Retention time.Duration
}

// Writer writes one stream: the notice, the missed events, the
// welcome lines and the waiting messages of its Plan, then its live
// events, the notes for its client and its keep-alive pings, until the
// stream is cut, a write fails or Stop. Its events are written by one of
// the host's Loops while its socket takes them at once; everything else,
// and events that would wait, on a goroutine started when there is
// something to write (an event queued, a note, a ping due, the cut), which
// ends once nothing is left: an idle stream holds no goroutine and no
// buffer, only its timers.
type Writer struct {
	c     *Conn
	t     Transport
	h     Host
	tm    Timing
	notes atomic.Pointer[chan string] // made by the first Note

	state atomic.Int32 // writerIdle, writerRunning, writerAgain or writerEnded
	stop  atomic.Bool  // Stop was called
	ping  atomic.Bool  // a keep-alive ping is due
	ack   atomic.Bool  // MailAckDelay passed: the offline messages can be confirmed
	done  chan struct{}
	err   error // why the stream ended, once done is closed
	onEnd func()

	loops *Loops    // the loops that write its events; nil: none (or t cannot write without waiting)
	now   nowWriter // t, when it can

	// Owned by the writer.
	plan           *Plan // written first, then nil
	pending        bool  // a loop left bytes in t's buffer: flush them first
	until          time.Time
	spare          []*Event
	ackFrom, ackTo uint64

	tmu       sync.Mutex // the timers, and ended
	keepAlive *time.Timer
	confirm   *time.Timer
	ended     bool
}

// The states of a Writer.
const (
	writerIdle    = iota // not being written: the next wake-up starts a writer
	writerRunning        // written by a goroutine or a loop; a wake-up makes it look again (writerAgain)
	writerAgain          // writing, and woken since it last looked
	writerEnded          // the stream ended: no goroutine ever again
)

// Start writes the stream c of plan j on t: its writer takes c's queue,
// the notes (Note) and the pings every KeepAlive. onEnd (may be nil) is
// called once when the stream ends, from its writer: the stream's owner
// then stops reading the connection and calls Stop.
func Start(c *Conn, j Plan, t Transport, h Host, tm Timing, onEnd func()) *Writer {
	l := &Writer{c: c, t: t, h: h, tm: tm, plan: &j, done: make(chan struct{}), onEnd: onEnd}
	if w := h.Loops(); w != nil {
		if now, ok := t.(nowWriter); ok {
			l.loops, l.now = w, now
		}
	}
	c.OnWake(l.wakeForEvents)
	l.Wake()
	return l
}

// startWriter starts l's writer goroutine.
func startWriter(l *Writer) {
	writerGoroutines.Add(1)
	go l.run()
}

// writerGoroutines counts the writer goroutines started (what the tests
// of the writer loops look at).
var writerGoroutines atomic.Int64

// Wake makes the writer look at what is waiting, starting its goroutine
// when none runs.
func (l *Writer) Wake() { l.wake(false) }

// wakeForEvents is Wake for events queued (or the cut): a stream that
// has a loop is handed to it, or with here, written by the caller when
// its writer is idle (runNow hands on what it cannot write at once).
func (l *Writer) wakeForEvents(here bool) {
	if here && l.loops != nil && l.state.CompareAndSwap(writerIdle, writerRunning) {
		l.runNow()
		return
	}
	l.wake(l.loops != nil)
}

func (l *Writer) wake(onLoop bool) {
	for {
		switch l.state.Load() {
		case writerIdle:
			if l.state.CompareAndSwap(writerIdle, writerRunning) {
				if !onLoop || !l.loops.hand(l) {
					startWriter(l)
				}
				return
			}
		case writerRunning:
			if l.state.CompareAndSwap(writerRunning, writerAgain) {
				return
			}
		default:
			return
		}
	}
}

// Note hands msg to the writer, an error for the client, written after
// the notes before it. At most 4 wait: Note waits for room, or until
// done is closed (false: msg was dropped).
func (l *Writer) Note(done <-chan struct{}, msg string) bool {
	p := l.notes.Load()
	if p == nil {
		ch := make(chan string, 4)
		if !l.notes.CompareAndSwap(nil, &ch) {
			p = l.notes.Load()
		} else {
			p = &ch
		}
	}
	select {
	case *p <- msg:
		l.Wake()
		return true
	case <-done:
		return false
	}
}

// Stop ends the stream (its client went) and waits until its writer is
// done: a write in progress ends by itself, within WriteTimeout. It
// returns why the stream ended.
func (l *Writer) Stop() error {
	l.stop.Store(true)
	l.Wake()
	<-l.done
	return l.err
}

// Stalled reports, once the stream ended, whether its client was reading
// nothing: it was cut as a slow consumer, or a write timed out. Its
// connection is then best reset as it closes (nbio.ResetOnClose), so that
// its kernel buffers let go of what they hold for it at once.
func (l *Writer) Stalled() bool {
	ne, ok := errors.AsType[net.Error](l.err)
	return l.c.CutAsSlow() || ok && ne.Timeout()
}

// Done is closed once the stream ended.
func (l *Writer) Done() <-chan struct{} { return l.done }

func (l *Writer) run() {
	for {
		l.state.Store(writerRunning)
		if err := l.step(); err != nil {
			l.end(err)
			return
		}
		if l.state.CompareAndSwap(writerRunning, writerIdle) {
			return
		}
	}
}

// runNow writes, on a writer loop, the events waiting when they are all
// there is to write and the socket takes them at once. Anything else, and
// what the socket does not take, goes on to the stream's own goroutine.
func (l *Writer) runNow() {
	for {
		l.state.Store(writerRunning)
		if !l.onlyEvents() {
			startWriter(l)
			return
		}
		evs := l.c.Take(l.spare)
		for _, ev := range evs {
			l.now.Append(ev)
		}
		wrote := len(evs) > 0
		clear(evs)
		l.spare = evs[:0]
		if wrote {
			if done, err := l.now.FlushNow(); err != nil || !done {
				// The goroutine writes the rest under the write
				// deadline, or meets the error again and ends the stream.
				l.pending = true
				startWriter(l)
				return
			}
		}
		if l.state.CompareAndSwap(writerRunning, writerIdle) {
			return
		}
	}
}

// onlyEvents reports whether events are all l may have to write: no login,
// leftover, stop, cut, note, confirmation or ping. The writer calls it.
func (l *Writer) onlyEvents() bool {
	if l.plan != nil || l.pending || l.stop.Load() || l.ping.Load() || l.ack.Load() {
		return false
	}
	select {
	case <-l.c.Gone:
		return false
	default:
	}
	if p := l.notes.Load(); p != nil && len(*p) > 0 {
		return false
	}
	return true
}

func (l *Writer) end(err error) {
	l.state.Store(writerEnded)
	l.c.OnWake(nil)
	l.tmu.Lock()
	l.ended = true
	if l.keepAlive != nil {
		l.keepAlive.Stop()
	}
	if l.confirm != nil {
		l.confirm.Stop()
	}
	l.tmu.Unlock()
	l.err = err
	l.spare = nil
	close(l.done)
	if l.onEnd != nil {
		l.onEnd()
	}
}

// deadline bounds every write by a deadline between 3/4 of WriteTimeout
// and WriteTimeout away: moving it costs a timer update, which a broadcast
// to 10,000 streams would pay 10,000 times (12% of the server's CPU in a
// profile of ws-fanout), so it moves only when a quarter has passed.
func (l *Writer) deadline() {
	now := time.Now()
	if l.until.Sub(now) < l.tm.WriteTimeout*3/4 {
		l.until = now.Add(l.tm.WriteTimeout)
		l.t.SetDeadline(l.until)
	}
}

// step writes what is waiting; an error ends the stream.
func (l *Writer) step() error {
	if j := l.plan; j != nil {
		l.plan = nil
		if err := l.login(j); err != nil {
			return err
		}
	}
	select {
	case <-l.c.Gone:
		l.t.SetDeadline(time.Now().Add(time.Second))
		reason := l.c.CutReason()
		l.t.End(reason, l.h.Closing())
		return errors.New(reason)
	default:
	}
	if l.stop.Load() {
		return context.Canceled
	}
	if l.pending {
		l.pending = false
		l.deadline()
		if err := l.t.Flush(); err != nil {
			return err
		}
	}
	evs := l.c.Take(l.spare)
	if len(evs) > 0 {
		l.deadline()
		for _, ev := range evs {
			if err := l.t.Event(ev); err != nil {
				return err
			}
		}
		if err := l.t.Flush(); err != nil {
			return err
		}
		clear(evs)
	}
	l.spare = evs[:0]
	var notes chan string
	if p := l.notes.Load(); p != nil {
		notes = *p
	}
	for wrote := false; ; {
		var msg string
		got := false
		select {
		case msg, got = <-notes:
		default:
		}
		if !got {
			if wrote {
				if err := l.t.Flush(); err != nil {
					return err
				}
			}
			break
		}
		l.deadline()
		if err := l.t.Note(msg); err != nil {
			return err
		}
		wrote = true
	}
	if l.ack.Swap(false) {
		// Still open MailAckDelay after the flush, and a write after
		// that still goes through: the client read them.
		l.deadline()
		if err := l.t.Ping(); err != nil {
			return err
		}
		if !l.stop.Load() {
			l.h.Delivered(l.c.Nick, l.ackFrom, l.ackTo)
		}
	}
	if l.ping.Swap(false) {
		l.deadline()
		if err := l.t.Ping(); err != nil {
			return err
		}
	}
	return nil
}

// login writes the notice, the missed events, the welcome lines and the
// waiting messages of j, then starts the stream's timers.
func (l *Writer) login(j *Plan) error {
	t, h := l.t, l.h
	resume, hasResume := j.Resume, j.HasResume
	if j.Notice != "" {
		l.deadline()
		if err := t.Note(j.Notice); err != nil {
			return err
		}
	}
	if pruned := h.Pruned(); hasResume && resume < pruned {
		l.deadline()
		if err := t.Note(fmt.Sprintf("events %d to %d are older than the retention window (%v) and were deleted: those addressed to you are missing from this resume", resume+1, pruned, l.tm.Retention)); err != nil {
			return err
		}
	}
	if hasResume {
		if err := h.Replay(l.c, resume, j.ReplayTo, t, l.deadline); err != nil {
			return err
		}
	}
	l.deadline()
	for _, ev := range j.Preamble {
		if err := t.Event(ev); err != nil {
			return err
		}
	}
	if err := h.Replay(l.c, j.MailFrom, j.MailTo, t, l.deadline); err != nil {
		return err
	}
	if err := t.Flush(); err != nil {
		return err
	}
	// Offline messages leave the mailbox once their delivery is known.
	l.ackFrom, l.ackTo = j.SeenFrom(), j.MailTo
	byDelay := false
	if j.MailPending {
		var err error
		if byDelay, err = t.AskAck(l.ackFrom, l.ackTo); err != nil {
			return err
		}
	}
	l.tmu.Lock()
	defer l.tmu.Unlock()
	if byDelay {
		l.confirm = time.AfterFunc(l.tm.MailAckDelay, func() {
			l.ack.Store(true)
			l.Wake()
		})
	}
	l.keepAlive = time.AfterFunc(l.tm.KeepAlive, l.tick)
	return nil
}

// tick asks for a keep-alive ping and sets the next one, every KeepAlive.
func (l *Writer) tick() {
	l.ping.Store(true)
	l.Wake()
	l.tmu.Lock()
	if !l.ended {
		l.keepAlive.Reset(l.tm.KeepAlive)
	}
	l.tmu.Unlock()
}
