package chatserver

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/store"
)

// hub owns every user and stream and the store's writes. One goroutine runs
// it; requests (requests.go) are handled in batches, each batch one store
// transaction (a group commit), and events reach the streams only after
// their commit. Its concerns live beside it: presence.go (joins, leaves,
// the leave grace), posts.go, mailbox.go (offline messages), prune.go
// (retention), wording.go (the article's texts), store.go (the file).
type hub struct {
	store      *store.Store
	log        *slog.Logger
	queueSize  int
	grace      time.Duration
	retention  time.Duration
	maxMailbox int
	maxBoxes   int
	maxBytes   int64
	now        func() time.Time

	reqs     chan request
	syncq    chan *commit       // batches written, waiting for their sync (syncLoop)
	synced   chan struct{}      // closed when syncLoop is done
	pruneNow chan chan struct{} // prunes at once, on the hub goroutine (tests)
	quit     chan struct{}
	done     chan struct{}

	closing atomic.Bool
	pruned  atomic.Uint64 // the last event id pruned: a resume from before it may miss events

	// Owned by the hub goroutine.
	seq             uint64
	users           map[string]*user
	mailboxes       map[string]int
	pending         []delivery
	after           []func()
	checkpointAt    int64         // the log's size at which the next checkpoint is due
	checkpointEvery int64         // the log's size that makes a checkpoint (store.CheckpointBytes)
	resubmit        func(request) // hands a failed leave to the hub again (resubmitLater)
	batch           []request

	// Presence notices waiting for the end of their window (presence.go).
	presWindow time.Duration
	presKind   int
	presNicks  []string
	presLast   time.Time // when the last presence notice was told
	presTimer  bool      // a presenceReq is on its way
	flushing   bool
}

// delivery is an event for a stream, handed over once its batch committed.
type delivery struct {
	c  *conn
	ev *event
}

const maxBatch = 512

func newHub(st *store.Store, state store.State, o *Options) *hub {
	h := &hub{
		store:      st,
		log:        o.Logger,
		queueSize:  o.QueueSize,
		grace:      o.LeaveGrace,
		retention:  o.Retention,
		maxMailbox: o.MaxMailbox,
		maxBoxes:   o.MaxMailboxes,
		maxBytes:   o.MaxStoreBytes,
		now:        time.Now,
		reqs:       make(chan request, 1024),
		pruneNow:   make(chan chan struct{}),
		quit:       make(chan struct{}),
		done:       make(chan struct{}),
		seq:        state.Seq,
		users:      map[string]*user{},
		mailboxes:  state.Mailboxes,
		presWindow: o.PresenceWindow,

		checkpointAt:    store.CheckpointBytes,
		checkpointEvery: store.CheckpointBytes,
	}
	h.resubmit = h.resubmitLater
	h.pruned.Store(state.Pruned)
	return h
}

// do hands r to the hub and waits for its result.
func (h *hub) do(ctx context.Context, r request) result {
	if err := h.submit(ctx, r); err != nil {
		return result{err: err}
	}
	return h.wait(r)
}

// submit hands r to the hub without waiting for its result. Requests are
// handled in the order they were submitted.
func (h *hub) submit(ctx context.Context, r request) error {
	*r.replies() = make(chan result, 1)
	select {
	case h.reqs <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-h.quit:
		return ErrShuttingDown
	}
}

// wait returns the result of a submitted request.
func (h *hub) wait(r request) result {
	ch := *r.replies()
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
	h.startSyncer()
	defer close(h.done)
	defer func() { close(h.syncq); <-h.synced }()
	pruneEvery := min(h.retention/10, time.Minute)
	pruneEvery = max(pruneEvery, time.Second)
	tick := time.NewTicker(pruneEvery)
	defer tick.Stop()
	h.prune()
	for {
		select {
		case r := <-h.reqs:
			h.batch = append(h.batch[:0], r)
		fill:
			for len(h.batch) < maxBatch {
				select {
				case r := <-h.reqs:
					h.batch = append(h.batch, r)
				default:
					break fill
				}
			}
			h.process(h.batch)
			clear(h.batch)
		case <-tick.C:
			h.prune()
		case done := <-h.pruneNow:
			h.prune()
			close(done)
		case <-h.quit:
			for {
				select {
				case r := <-h.reqs:
					h.process([]request{r})
				default:
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

// startSyncer runs the goroutine that syncs the log and answers requests.
func (h *hub) startSyncer() {
	h.syncq = make(chan *commit, 64)
	h.synced = make(chan struct{})
	go h.syncLoop()
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
	cm := &commit{results: make([]result, len(batch)), replies: make([]chan result, len(batch))}
	before := h.snapshot(batch)
	end, err := h.store.Write(func(tx *store.Tx) error {
		for i, r := range batch {
			res, err := r.apply(h, tx)
			if err != nil && !refusesOne(err) {
				return err
			}
			res.err = err
			cm.results[i] = res
		}
		if h.seq != before.seq {
			return store.PutSeq(tx, h.seq)
		}
		return nil
	})
	if err != nil {
		// Nothing of this batch is stored, so nothing of it is delivered.
		h.log.Error("store batch", "requests", len(batch), "err", err)
		h.restore(before)
		for i := range cm.results {
			cm.results[i] = result{err: fmt.Errorf("store: %w", err)}
		}
		clear(h.pending)
		h.pending, h.after = h.pending[:0], h.after[:0]
		h.retryLeaves(batch)
	}
	cm.end = end
	cm.deliveries = append([]delivery(nil), h.pending...)
	if len(h.after) > 0 {
		cm.after = append([]func(){}, h.after...)
	}
	for i, r := range batch {
		cm.replies[i] = *r.replies()
	}
	h.syncq <- cm
	clear(h.pending)
	if end >= h.checkpointAt {
		h.drain()
		if err := h.store.Checkpoint(); err != nil {
			h.log.Error("store checkpoint", "err", err)
			h.checkpointAt = end + h.checkpointEvery/4 // try again later
		} else {
			h.checkpointAt = h.checkpointEvery
		}
	}
}

// hubMemory is what a batch may change of the hub's memory besides the
// mailbox counts (which tx's undo restores).
type hubMemory struct {
	seq       uint64
	users     map[string]savedUser // the users the batch's requests may touch
	presKind  int
	presNicks []string
	presLast  time.Time
	presTimer bool
}

// savedUser is a user as it was (u == nil: absent).
type savedUser struct {
	u        *user
	conns    map[*conn]struct{}
	graceGen uint64
}

// snapshot saves what batch may change of the hub's memory.
func (h *hub) snapshot(batch []request) hubMemory {
	m := hubMemory{seq: h.seq, presKind: h.presKind, presLast: h.presLast, presTimer: h.presTimer}
	if len(h.presNicks) > 0 {
		m.presNicks = slices.Clone(h.presNicks)
	}
	for _, r := range batch {
		var nick string
		switch r := r.(type) {
		case *joinReq:
			nick = r.conn.nick
		case *leaveReq:
			nick = r.conn.nick
		case *graceReq:
			nick = r.nick
		default:
			continue
		}
		if m.users == nil {
			m.users = map[string]savedUser{}
		}
		if _, ok := m.users[nick]; ok {
			continue
		}
		su := savedUser{u: h.users[nick]}
		if su.u != nil {
			su.conns, su.graceGen = maps.Clone(su.u.conns), su.u.graceGen
		}
		m.users[nick] = su
	}
	return m
}

// restore brings the hub's memory back to m.
func (h *hub) restore(m hubMemory) {
	h.seq = m.seq
	for nick, su := range m.users {
		if su.u == nil {
			delete(h.users, nick)
			continue
		}
		su.u.conns, su.u.graceGen = su.conns, su.graceGen
		h.users[nick] = su.u
	}
	clear(h.presNicks)
	h.presKind, h.presNicks, h.presLast, h.presTimer = m.presKind, append(h.presNicks[:0], m.presNicks...), m.presLast, m.presTimer
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
		default:
			continue
		}
		h.resubmit(again)
	}
}

// resubmitLater hands r to the hub again a second later.
func (h *hub) resubmitLater(r request) {
	time.AfterFunc(time.Second, func() {
		select {
		case h.reqs <- r:
		case <-h.quit:
		}
	})
}

// commit is a batch written to the store's log, waiting for its sync.
type commit struct {
	end        int64 // the log's size once the batch was written
	results    []result
	replies    []chan result
	deliveries []delivery
	after      []func()
	barrier    chan struct{} // a marker: closed when every commit before it is done
}

// syncLoop syncs the store's log for the commits the hub hands over, in
// order, then delivers their events and answers their requests. A commit
// whose log write went before a sync that covers it needs no sync of its own.
func (h *hub) syncLoop() {
	defer close(h.synced)
	var failed error
	for cm := range h.syncq {
		if cm.barrier != nil {
			close(cm.barrier)
			continue
		}
		if cm.end > 0 && failed == nil {
			failed = h.store.SyncTo(cm.end)
			if failed != nil {
				h.log.Error("store sync", "err", failed)
			}
		}
		if failed != nil && cm.end > 0 {
			// Not on disk: neither delivered nor acknowledged.
			for i := range cm.results {
				cm.results[i] = result{err: fmt.Errorf("store: %w", failed)}
			}
			cm.deliveries = nil
		}
		for _, d := range cm.deliveries {
			h.enqueue(d.c, d.ev)
		}
		for _, f := range cm.after {
			f()
		}
		for i, ch := range cm.replies {
			if ch != nil {
				ch <- cm.results[i]
			}
		}
	}
}

// drain waits until every commit handed to the syncer is done.
func (h *hub) drain() {
	b := make(chan struct{})
	h.syncq <- &commit{barrier: b}
	<-b
}

func (h *hub) enqueue(c *conn, ev *event) {
	if !c.push(ev) {
		h.cut(c, fmt.Sprintf(cutSlow, c.max))
	}
}

func (h *hub) cut(c *conn, reason string) { c.cutWith(reason) }

// record stores a new event under the next id; to == "" addresses everyone
// but except.
func (h *hub) record(tx *store.Tx, to, except, text string) (*event, error) {
	if len(h.presNicks) > 0 && !h.flushing {
		// Waiting presence notices come first: nobody hears from a user
		// before hearing that it joined.
		h.flushing = true
		err := h.flushPresence(tx)
		h.flushing = false
		if err != nil {
			return nil, err
		}
	}
	h.seq++
	ev := newEvent(h.seq, text)
	rec := &store.Record{ID: h.seq, Time: h.now().UnixNano(), To: to, Except: except, Text: text}
	return ev, store.PutRecord(tx, rec)
}

// toUser delivers ev to every stream of nick once the batch commits.
func (h *hub) toUser(nick string, ev *event) {
	if u := h.users[nick]; u != nil {
		for c := range u.conns {
			h.pending = append(h.pending, delivery{c, ev})
		}
	}
}

// toAll delivers ev to every stream of every user but except once the batch commits.
func (h *hub) toAll(except string, ev *event) {
	for nick, u := range h.users {
		if nick == except {
			continue
		}
		for c := range u.conns {
			h.pending = append(h.pending, delivery{c, ev})
		}
	}
}
