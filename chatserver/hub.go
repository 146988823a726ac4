package chatserver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/auth"
	"github.com/wasmgap/wasmgap/chatserver/internal/room"
	"github.com/wasmgap/wasmgap/chatserver/internal/store"
	"github.com/wasmgap/wasmgap/chatserver/internal/stream"
)

// hub runs one node's chat: the rules' state machine (internal/room) fed
// from this node's own log. Requests (requests.go) are handled in batches,
// each batch one store transaction (a group commit), and events reach the
// streams only after their commit. A request that finds the hub idle is
// handled at once on its caller's goroutine, a batch of one (no goroutine
// woken); under load, requests queue and the hub's goroutine takes them in
// batches. The machine decides; the hub writes what it decided into the
// store (store.go: the write-ahead log and the memtable) and hands the
// events to the streams connected here (local). A NATS node (nats.go) feeds the
// same machine from the JetStream stream instead.
type hub struct {
	store     *store.Store
	log       *slog.Logger
	queueSize int
	grace     time.Duration
	retention time.Duration
	maxBytes  int64
	now       func() time.Time

	mu       sync.Mutex   // held while a batch is handled: the hub's state below
	queued   atomic.Int64 // requests handed to reqs and not yet handled
	reqs     chan request
	syncer   *store.Syncer      // syncs the batches written, then answers them
	pruneNow chan chan struct{} // prunes at once, on the hub goroutine (tests)
	quit     chan struct{}
	done     chan struct{}

	closing    atomic.Bool
	syncFailed atomic.Bool   // a sync failed (logged once)
	pruned     atomic.Uint64 // the last event id pruned: a resume from before it may miss events

	claims *auth.Book // the nickname claims (Options.ClaimNicks), saved in the store

	// Guarded by mu.
	stopped         bool // the hub's goroutine has returned
	m               *room.Machine
	reqSeq          uint64       // the sequence of the machine's requests
	local           stream.Local // the streams here, by nick, and their tokens
	tokens          uint64
	pending         []delivery
	after           []func()
	checkpointAt    int64         // the log's size at which the next checkpoint is due
	checkpointEvery int64         // the log's size that makes a checkpoint (store.CheckpointBytes)
	resubmit        func(request) // hands a failed leave to the hub again (resubmitLater)
	batch           []request
}

// delivery is an event for a stream, handed over once its batch committed.
type delivery struct {
	c  *stream.Conn
	ev *stream.Event
}

const maxBatch = 512

// newHub starts the hub on the store opened with state: its mailboxes are
// read into the machine.
func newHub(st *store.Store, state store.State, o *Options) (*hub, error) {
	h := &hub{
		store:     st,
		log:       o.Logger,
		queueSize: o.QueueSize,
		grace:     o.LeaveGrace,
		retention: o.Retention,
		maxBytes:  o.MaxStoreBytes,
		now:       time.Now,
		reqs:      make(chan request, 1024),
		pruneNow:  make(chan chan struct{}),
		quit:      make(chan struct{}),
		done:      make(chan struct{}),
		m:         room.New(roomConfig(o, 0), state.Seq),

		checkpointAt:    store.CheckpointBytes,
		checkpointEvery: store.CheckpointBytes,
	}
	h.resubmit = h.resubmitLater
	h.pruned.Store(state.Pruned)
	var ended []string
	h.claims, ended = auth.RestoreBook(claimHold(o.Retention, o.LeaveGrace), state.Claims, time.Now(), h.saveClaim)
	_, err := st.Write(func(tx *store.Tx) error {
		for _, nick := range ended {
			if err := store.DeleteClaim(tx, nick); err != nil {
				return err
			}
		}
		for _, nick := range slices.Sorted(maps.Keys(state.Mailboxes)) {
			entries, err := store.ReadMail(tx, nick)
			if err != nil {
				return err
			}
			for _, e := range entries {
				h.m.Restore(nick, room.Mail{Key: binary.BigEndian.Uint64(e.Key), Orig: e.Mail.Orig, ID: e.Mail.ID,
					From: e.Mail.From, Addr: e.Mail.Addr, Text: e.Mail.Text, Sent: time.Unix(0, e.Mail.Time)})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("chat store: read the mailboxes: %w", err)
	}
	h.syncer = store.NewSyncer(st)
	return h, nil
}

// saveClaim stores nick's claim as the claims hold it (auth.SaveFunc);
// with wait, it returns once that is on disk.
func (h *hub) saveClaim(ctx context.Context, nick string, wait bool) error {
	if wait {
		return h.do(ctx, &claimReq{nick: nick}).err
	}
	return h.submit(ctx, &claimReq{nick: nick})
}

// roomConfig is the rules' parameters for o; idsPerRequest as room.Config's.
func roomConfig(o *Options, idsPerRequest uint64) room.Config {
	return room.Config{
		Grace:               max(o.LeaveGrace, 0),
		Retention:           o.Retention,
		PresenceWindow:      o.PresenceWindow,
		MaxMailbox:          o.MaxMailbox,
		MaxMailboxes:        o.MaxMailboxes,
		MaxMailPerAddr:      max(1, o.MaxMailboxes/10),
		MaxMailBytesPerAddr: max(1, o.MaxStoreBytes/10),
		EvictMail:           o.EvictMail,
		IDsPerRequest:       idsPerRequest,
	}
}

// do hands r to the hub and waits for its result.
func (h *hub) do(ctx context.Context, r request) result {
	if err := h.submit(ctx, r); err != nil {
		return result{err: err}
	}
	return h.wait(r)
}

// submit hands r to the hub without waiting for its result: it handles r
// at once when nothing is queued or being handled. Requests are handled in
// the order they were submitted.
func (h *hub) submit(ctx context.Context, r request) error {
	if rp := r.replyTo(); rp.then == nil {
		rp.ch = make(chan result, 1)
	}
	if h.queued.Load() == 0 && h.mu.TryLock() {
		if h.queued.Load() == 0 && !h.stopped {
			h.process([]request{r})
			h.mu.Unlock()
			return nil
		}
		h.mu.Unlock()
	}
	h.queued.Add(1)
	select {
	case h.reqs <- r:
		return nil
	case <-ctx.Done():
		h.queued.Add(-1)
		return ctx.Err()
	case <-h.quit:
		h.queued.Add(-1)
		return ErrShuttingDown
	}
}

// handle handles r, taken from reqs, in a batch with those queued behind it.
func (h *hub) handle(r request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.batch = append(h.batch[:0], r)
	for len(h.batch) < maxBatch && len(h.reqs) > 0 {
		h.batch = append(h.batch, <-h.reqs)
	}
	h.process(h.batch)
	h.queued.Add(-int64(len(h.batch)))
	clear(h.batch)
}

// wait returns the result of a submitted request.
func (h *hub) wait(r request) result {
	ch := r.replyTo().ch
	select {
	case res := <-ch:
		return res
	case <-h.done:
		// The hub answers every request it took before it stops.
		select {
		case res := <-ch:
			return res
		default:
			return result{err: ErrShuttingDown}
		}
	}
}

func (h *hub) run() {
	defer close(h.done)
	defer h.syncer.Close()
	pruneEvery := min(h.retention/10, time.Minute)
	pruneEvery = max(pruneEvery, time.Second)
	tick := time.NewTicker(pruneEvery)
	defer tick.Stop()
	h.prune()
	for {
		select {
		case r := <-h.reqs:
			h.handle(r)
		case <-tick.C:
			h.prune()
		case done := <-h.pruneNow:
			h.prune()
			close(done)
		case <-h.quit:
			for {
				select {
				case r := <-h.reqs:
					h.handle(r)
				default:
					h.mu.Lock()
					h.stopped = true
					h.mu.Unlock()
					return
				}
			}
		}
	}
}

func (h *hub) stop() {
	close(h.quit)
	<-h.done
}

// process handles one batch, its changes written to the store's memtable
// and, as one record, to its log, and hands it to the syncer, which
// delivers and replies once the log is synced. The hub goes on with the
// next batch meanwhile, so the time of one sync is spent building the next
// batch, and one sync can cover several batches.
//
// When the batch fails (the store, or a request's error that is not a
// refusal), nothing of it is stored and the hub's memory is brought back to
// match: the sequence, the mailbox counts (through tx's undo), the users
// its requests touched and the presence notices waiting. A stream's leave
// cannot be taken back: it is submitted again a second later.
func (h *hub) process(batch []request) {
	h.pending = h.pending[:0]
	h.after = h.after[:0]
	cm := &commit{results: make([]result, len(batch)), replies: make([]*reply, len(batch))}
	seq := h.m.Last()
	h.m.Begin()
	end, err := h.store.Write(func(tx *store.Tx) error {
		for i, r := range batch {
			res, err := r.apply(h, tx)
			if _, refused := errors.AsType[*refusal](err); err != nil && !refused && !refusesOne(err) {
				return err
			}
			res.err = err
			cm.results[i] = res
		}
		if h.m.Last() != seq {
			return store.ReserveIDs(tx, h.m.Last())
		}
		return nil
	})
	if err != nil {
		// Nothing of this batch is stored, so nothing of it is delivered.
		h.log.Error("store batch", "requests", len(batch), "err", err)
		h.m.Rollback()
		h.local.Undo()
		for i := range cm.results {
			cm.results[i] = result{err: fmt.Errorf("store: %w", err)}
		}
		clear(h.pending)
		h.pending, h.after = h.pending[:0], h.after[:0]
		h.retryLeaves(batch)
	} else {
		h.m.Commit()
	}
	h.local.Keep()
	cm.deliveries = append([]delivery(nil), h.pending...)
	if len(h.after) > 0 {
		cm.after = append([]func(){}, h.after...)
	}
	// An answer that shows nothing stored goes before any sync (goesAhead).
	ahead, waiting := err == nil && h.syncer.Synced(h.store.IDsEnd()), false
	for i, r := range batch {
		if ahead && goesAhead(r, cm.results[i]) {
			r.replyTo().answer(cm.results[i])
			continue
		}
		cm.replies[i], waiting = r.replyTo(), true
	}
	if waiting || len(cm.deliveries) > 0 || len(cm.after) > 0 || !h.syncer.Synced(end) {
		h.syncer.After(end, func(failed error) { h.committed(cm, failed) })
	}
	clear(h.pending)
	if end >= h.checkpointAt {
		h.syncer.Drain()
		if err := h.store.Checkpoint(); err != nil {
			h.log.Error("store checkpoint", "err", err)
			h.checkpointAt = end + h.checkpointEvery/4 // try again later
		} else {
			h.checkpointAt = h.checkpointEvery
		}
	}
}

// retryLeaves submits again, a second later, the leaves of a failed batch:
// their streams are gone whatever the store says.
func (h *hub) retryLeaves(batch []request) {
	for _, r := range batch {
		var again request
		switch r := r.(type) {
		case *leaveReq:
			again = &leaveReq{conn: r.conn}
		case *graceReq:
			again = &graceReq{nick: r.nick, gen: r.gen}
		case *presenceReq:
			again = &presenceReq{}
		default:
			continue
		}
		h.resubmit(again)
	}
}

// resubmitLater hands r to the hub again a second later.
func (h *hub) resubmitLater(r request) {
	time.AfterFunc(time.Second, func() { h.submit(context.Background(), r) })
}

// commit is a batch written to the store's log, waiting for its sync.
type commit struct {
	results    []result
	replies    []*reply
	deliveries []delivery
	after      []func()
}

// deliveredHere is how many deliveries a commit writes on its own
// goroutine at most (stream.Conn.PushHere): a send to one user wakes no
// writer loop, where the hand-off cost as much CPU as the write.
const deliveredHere = 4

// committed runs once cm's batch is on disk (failed nil), or cannot be, on
// the syncer (on the hub with NoSync: Syncer.After). It delivers the
// batch's events and answers its requests; what is not on disk is neither.
func (h *hub) committed(cm *commit, failed error) {
	if failed != nil {
		if h.syncFailed.CompareAndSwap(false, true) {
			h.log.Error("store sync", "err", failed)
		}
		for i := range cm.results {
			cm.results[i] = result{err: fmt.Errorf("store: %w", failed)}
		}
		cm.deliveries = nil
	}
	// A few deliveries (a message to one user) are written here, by
	// whoever commits, when their streams' writers are idle; a broadcast
	// goes to the writer loops, which share its writes.
	here := len(cm.deliveries) <= deliveredHere
	for _, d := range cm.deliveries {
		if here {
			d.c.PushHere(d.ev)
		} else {
			d.c.Push(d.ev)
		}
	}
	for _, f := range cm.after {
		f()
	}
	for i, r := range cm.replies {
		if r != nil { // nil: answered ahead
			r.answer(cm.results[i])
		}
	}
}

func (h *hub) apply(tx *store.Tx, in room.Request) (room.Output, error) {
	h.reqSeq++
	now := h.now()
	in.Seq, in.At = h.reqSeq, now
	out := h.m.Apply(in)
	for _, id := range out.Deleted {
		if err := store.DeleteRecord(tx, id); err != nil {
			return out, err
		}
	}
	for i := range out.Events {
		e := &out.Events[i]
		if err := store.PutRecord(tx, &store.Record{ID: e.ID, Time: now.UnixNano(), To: e.To, Except: e.Except, Text: e.Text}); err != nil {
			return out, err
		}
		h.deliver(e)
	}
	for _, mc := range out.Mail {
		if err := h.writeMail(tx, mc); err != nil {
			return out, err
		}
	}
	for _, g := range out.Graces {
		h.after = append(h.after, func() {
			time.AfterFunc(h.grace, func() { h.submit(context.Background(), &graceReq{nick: g.Nick, gen: g.Gen}) })
		})
	}
	if !out.FlushAt.IsZero() {
		wait := out.FlushAt.Sub(now)
		h.after = append(h.after, func() {
			time.AfterFunc(max(wait, 0), func() { h.submit(context.Background(), &presenceReq{}) })
		})
	}
	if out.Refusal != nil {
		return out, refusalOf(out.Refusal)
	}
	return out, nil
}

// refusalOf is the machine's refusal as the chat's error of its kind.
func refusalOf(r *room.Refusal) error {
	kind := ErrStoreFull
	switch r.Kind {
	case room.MailboxFull:
		kind = ErrMailboxFull
	case room.SenderMailFull:
		kind = ErrSenderMailFull
	case room.Unavailable:
		kind = ErrUnavailable
	}
	return &refusal{kind: kind, msg: r.Text}
}

// deliver hands e to the streams here it is addressed to once the batch commits.
func (h *hub) deliver(e *room.Event) {
	ev := stream.NewEvent(e.ID, e.Text)
	for c := range h.local.To(e.To, e.Except) {
		h.pending = append(h.pending, delivery{c, ev})
	}
}
