package chatserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// event is one line a user receives, encoded once for every transport.
type event struct {
	id   uint64
	text string
	sse  []byte // "id: <n>\ndata: <text>\n\n"
	ws   []byte // {"id":<n>,"text":"<text>"}
}

func newEvent(id uint64, text string) *event {
	e := &event{id: id, text: text}
	var b strings.Builder
	b.Grow(len(text) + 24)
	b.WriteString("id: ")
	b.WriteString(strconv.FormatUint(id, 10))
	b.WriteByte('\n')
	for line := range strings.SplitSeq(text, "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	e.sse = []byte(b.String())
	e.ws, _ = json.Marshal(struct {
		ID   uint64 `json:"id"`
		Text string `json:"text"`
	}{id, text})
	return e
}

// conn is one open stream (an SSE response or a WebSocket) of one user.
// The hub owns its membership and appends events to its queue; the stream's
// writer takes all waiting events at once (one wake-up per batch, however
// many events). When the queue holds max events the hub cuts the stream:
// sets reason, closes cut, and drops every later event for it (the client
// resumes from the last id it received).
type conn struct {
	nick   string
	max    int
	mu     sync.Mutex
	queue  []*event
	ready  chan struct{} // holds a token while queue is not empty
	cut    chan struct{}
	reason atomic.Pointer[string]
	isCut  bool // hub-owned
}

func newConn(nick string, queueSize int) *conn {
	return &conn{nick: nick, max: queueSize, ready: make(chan struct{}, 1), cut: make(chan struct{})}
}

// push queues ev for the writer; false when the queue is full.
func (c *conn) push(ev *event) bool {
	c.mu.Lock()
	if len(c.queue) >= c.max {
		c.mu.Unlock()
		return false
	}
	c.queue = append(c.queue, ev)
	c.mu.Unlock()
	select {
	case c.ready <- struct{}{}:
	default:
	}
	return true
}

// take returns the waiting events and leaves spare (emptied) as the queue.
func (c *conn) take(spare []*event) []*event {
	c.mu.Lock()
	evs := c.queue
	c.queue = spare[:0]
	c.mu.Unlock()
	return evs
}

// cutReason is why the hub closed the stream, or "" while it is open.
func (c *conn) cutReason() string {
	if p := c.reason.Load(); p != nil {
		return *p
	}
	return ""
}

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

type reqKind int

const (
	reqPost reqKind = iota
	reqJoin
	reqLeave
	reqGrace
	reqCutAll
	reqInspect
	reqAck
)

type request struct {
	kind      reqKind
	post      Post
	conn      *conn
	resume    uint64
	hasResume bool
	nick      string
	gen       uint64
	ackFrom   uint64 // reqAck: nick's events with ackFrom < id <= ackTo were delivered
	ackTo     uint64
	inspect   func(h *hub) // reqInspect: runs on the hub goroutine
	reply     chan result  // nil: nobody waits
}

type result struct {
	offline bool
	joined  joined
	err     error
}

// Errors the hub answers posts with; handlers map them to HTTP statuses.
var (
	errMailboxFull  = errors.New("mailbox full")
	errStoreFull    = errors.New("chat store full")
	errShuttingDown = errors.New("the chat server is shutting down; retry in a moment")
)

type delivery struct {
	c  *conn
	ev *event
}

// hub owns every user and stream and the store's writes. One goroutine runs
// it; requests are handled in batches, each batch one store transaction (a
// group commit), and events reach the streams only after their commit.
type hub struct {
	store      *store
	log        *slog.Logger
	queueSize  int
	grace      time.Duration
	retention  time.Duration
	maxMailbox int
	maxBoxes   int
	maxBytes   int64
	now        func() time.Time

	reqs     chan *request
	pruneNow chan chan struct{} // prunes at once, on the hub goroutine (tests)
	quit     chan struct{}
	done     chan struct{}

	closing atomic.Bool
	pruned  atomic.Uint64 // the last event id pruned: a resume from before it may miss events

	// Owned by the hub goroutine.
	seq       uint64
	users     map[string]*user
	mailboxes map[string]int
	pending   []delivery
	after     []func()
	used      int64 // bytes of data in the store at the start of the batch
	batch     []*request
}

const maxBatch = 512

func newHub(st *store, state storeState, o *Options) *hub {
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
		reqs:       make(chan *request, 1024),
		pruneNow:   make(chan chan struct{}),
		quit:       make(chan struct{}),
		done:       make(chan struct{}),
		seq:        state.seq,
		users:      map[string]*user{},
		mailboxes:  state.mailboxes,
	}
	h.pruned.Store(state.pruned)
	return h
}

// do hands r to the hub and waits for its result.
func (h *hub) do(ctx context.Context, r *request) result {
	if err := h.submit(ctx, r); err != nil {
		return result{err: err}
	}
	return h.wait(r)
}

// submit hands r to the hub without waiting for its result. Requests are
// handled in the order they were submitted.
func (h *hub) submit(ctx context.Context, r *request) error {
	r.reply = make(chan result, 1)
	select {
	case h.reqs <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-h.quit:
		return errShuttingDown
	}
}

// wait returns the result of a submitted request.
func (h *hub) wait(r *request) result {
	select {
	case res := <-r.reply:
		return res
	case <-h.done:
		// The hub answers every request it took before it stops.
		select {
		case res := <-r.reply:
			return res
		default:
			return result{err: errShuttingDown}
		}
	}
}

func (h *hub) run() {
	defer close(h.done)
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
		case <-tick.C:
			h.prune()
		case done := <-h.pruneNow:
			h.prune()
			close(done)
		case <-h.quit:
			for {
				select {
				case r := <-h.reqs:
					h.process([]*request{r})
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

func (h *hub) prune() {
	if h.retention <= 0 {
		return
	}
	cutoff := h.now().Add(-h.retention)
	for {
		var n int
		var last uint64
		err := guarded(func() error {
			return h.store.db.Update(func(tx *bolt.Tx) (err error) {
				n, last, err = prune(tx, cutoff, 10000)
				return err
			})
		})
		if err != nil {
			h.log.Error("prune history", "err", err)
			return
		}
		if last > 0 {
			h.pruned.Store(last)
		}
		if n < 10000 {
			break
		}
	}
	h.pruneMail(cutoff)
}

// pruneMail deletes offline messages sent before cutoff: a mailbox keeps a
// message as long as the history keeps events.
func (h *hub) pruneMail(cutoff time.Time) {
	var left map[string]int
	err := guarded(func() error {
		return h.store.db.Update(func(tx *bolt.Tx) (err error) {
			left, err = pruneMail(tx, cutoff)
			return err
		})
	})
	if err != nil {
		h.log.Error("prune mailboxes", "err", err)
		return
	}
	for nick, n := range left {
		if n == 0 {
			delete(h.mailboxes, nick)
		} else {
			h.mailboxes[nick] = n
		}
	}
}

// process handles one batch in one transaction, then delivers and replies.
func (h *hub) process(batch []*request) {
	h.pending = h.pending[:0]
	h.after = h.after[:0]
	results := make([]result, len(batch))
	seq0 := h.seq
	err := guarded(func() error {
		return h.store.db.Update(func(tx *bolt.Tx) error {
			h.used = h.store.used(tx)
			for i, r := range batch {
				res, err := h.handle(tx, r)
				if err != nil && !isUserError(err) {
					return err
				}
				res.err = err
				results[i] = res
			}
			if h.seq != seq0 {
				return putSeq(tx, h.seq)
			}
			return nil
		})
	})
	if err != nil {
		// The store failed: nothing of this batch is stored, so nothing of
		// it is delivered. Ids handed out stay used (ids only grow).
		h.log.Error("store batch", "requests", len(batch), "err", err)
		for i := range results {
			results[i] = result{err: fmt.Errorf("store: %w", err)}
		}
		h.pending = h.pending[:0]
	}
	for _, d := range h.pending {
		h.enqueue(d.c, d.ev)
	}
	for _, f := range h.after {
		f()
	}
	for i, r := range batch {
		if r.reply != nil {
			r.reply <- results[i]
		}
	}
	clear(h.pending)
}

// isUserError reports whether err refuses one request and leaves the rest
// of its batch to commit.
func isUserError(err error) bool {
	return errors.Is(err, errMailboxFull) || errors.Is(err, errShuttingDown) || errors.Is(err, errStoreFull)
}

func (h *hub) enqueue(c *conn, ev *event) {
	if c.isCut {
		return
	}
	if !c.push(ev) {
		h.cut(c, fmt.Sprintf("slow consumer: %d events waiting, the most a connection may queue; reconnect with the last event id received to resume", c.max))
	}
}

func (h *hub) cut(c *conn, reason string) {
	if c.isCut {
		return
	}
	c.isCut = true
	c.reason.Store(&reason)
	close(c.cut)
}

func (h *hub) handle(tx *bolt.Tx, r *request) (result, error) {
	switch r.kind {
	case reqPost:
		return h.handlePost(tx, r.post)
	case reqJoin:
		return h.handleJoin(tx, r)
	case reqLeave:
		return result{}, h.handleLeave(tx, r.conn)
	case reqInspect:
		r.inspect(h)
		return result{}, nil
	case reqAck:
		return result{}, h.handleAck(tx, r.nick, r.ackFrom, r.ackTo)
	case reqCutAll:
		for _, u := range h.users {
			for c := range u.conns {
				h.cut(c, r.nick)
			}
		}
		return result{}, nil
	case reqGrace:
		if u := h.users[r.nick]; u != nil && len(u.conns) == 0 && u.graceGen == r.gen {
			return result{}, h.goOffline(tx, r.nick)
		}
		return result{}, nil
	}
	return result{}, fmt.Errorf("unknown request kind %d", r.kind)
}

// record stores a new event under the next id; to == "" addresses everyone
// but except.
func (h *hub) record(tx *bolt.Tx, to, except, text string) (*event, error) {
	h.seq++
	ev := newEvent(h.seq, text)
	rec := &record{ID: h.seq, Time: h.now().UnixNano(), To: to, Except: except, Text: text}
	return ev, putRecord(tx, rec)
}

func (h *hub) toUser(nick string, ev *event) {
	if u := h.users[nick]; u != nil {
		for c := range u.conns {
			h.pending = append(h.pending, delivery{c, ev})
		}
	}
}

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

func (h *hub) handlePost(tx *bolt.Tx, p Post) (result, error) {
	if h.used >= h.maxBytes {
		return result{}, fmt.Errorf("%w: it holds %d bytes, the most allowed is %d; old history is pruned after the retention (%v), retry later", errStoreFull, h.used, h.maxBytes, h.retention)
	}
	if p.To == "all" {
		ev, err := h.record(tx, "", "", p.From+" to all: "+p.Text)
		if err != nil {
			return result{}, err
		}
		h.toAll("", ev)
		return result{}, nil
	}
	target := h.users[p.To]
	if target == nil {
		if h.mailboxes[p.To] == 0 && len(h.mailboxes) >= h.maxBoxes {
			return result{}, fmt.Errorf("%w: %d offline users already have messages waiting, the most kept; %s's message was not stored, retry once they logged in or their messages expired (retention %v)", errStoreFull, len(h.mailboxes), p.To, h.retention)
		}
		if h.mailboxes[p.To] >= h.maxMailbox {
			return result{}, fmt.Errorf("%w: %s is offline and already has %d messages waiting, the most kept per user", errMailboxFull, p.To, h.maxMailbox)
		}
		m := &mail{From: p.From, Text: p.Text, Time: p.Time.UnixNano()}
		if err := addMail(tx, p.To, m); err != nil {
			return result{}, err
		}
		h.mailboxes[p.To]++
		ev, err := h.record(tx, p.From, "", "You to "+p.To+" (offline): "+p.Text)
		if err != nil {
			return result{}, err
		}
		h.toUser(p.From, ev)
		return result{offline: true}, nil
	}
	if p.To != p.From {
		ev, err := h.record(tx, p.To, "", p.From+": "+p.Text)
		if err != nil {
			return result{}, err
		}
		h.toUser(p.To, ev)
		if len(target.conns) == 0 && h.mailboxes[p.To] < h.maxMailbox && (h.mailboxes[p.To] > 0 || len(h.mailboxes) < h.maxBoxes) {
			// Within the leave grace: a resume replays the event, a fresh
			// login gets it from the mailbox instead.
			if err := addMail(tx, p.To, &mail{Orig: ev.id, From: p.From, Text: p.Text, Time: p.Time.UnixNano()}); err != nil {
				return result{}, err
			}
			h.mailboxes[p.To]++
		}
	}
	ev, err := h.record(tx, p.From, "", "You to "+p.To+": "+p.Text)
	if err != nil {
		return result{}, err
	}
	h.toUser(p.From, ev)
	return result{}, nil
}

func (h *hub) handleJoin(tx *bolt.Tx, r *request) (result, error) {
	nick, c := r.conn.nick, r.conn
	if h.closing.Load() {
		return result{}, errShuttingDown
	}
	u := h.users[nick]
	wasOnline := u != nil
	// A resume id is the client's claim about what it saw, never an input to
	// the sequence: one above the last id issued cannot have been seen here
	// (a store that was reset, or a forged id), so nothing was missed.
	j := joined{resume: r.resume, hasResume: r.hasResume, replayTo: h.seq}
	if r.hasResume && r.resume > h.seq {
		j.resume, j.hasResume = 0, false
		j.notice = fmt.Sprintf("resume id %d is above the last event id issued here (%d): nothing was missed; the ids of this stream start again below it", r.resume, h.seq)
	}

	online := make([]string, 0, len(h.users))
	for n, ou := range h.users {
		if n != nick || len(ou.conns) > 0 {
			online = append(online, n)
		}
	}
	slices.Sort(online)
	h.seq++
	j.preamble = append(j.preamble, newEvent(h.seq, "Welcome "+nick+"!"))
	h.seq++
	j.preamble = append(j.preamble, newEvent(h.seq, "now online: "+strings.Join(online, ", ")))

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
		ev, err := h.record(tx, "", nick, nick+" has joined.")
		if err != nil {
			return result{}, err
		}
		h.toAll(nick, ev)
	}
	return result{joined: j}, nil
}

// offerMail gives nick's waiting messages to a new stream. A message the
// stream's resume id covers was delivered: it leaves the mailbox. One the
// replay carries stays as it is. Any other is stored again under a new id
// (ids of a stream only grow) in the mail range of j, its previous event
// deleted. All that are offered stay in the mailbox until their delivery is
// known (handleAck).
func (h *hub) offerMail(tx *bolt.Tx, nick string, j *joined) error {
	entries, err := readMail(tx, nick)
	if err != nil {
		return err
	}
	var delivered [][]byte
	for i := range entries {
		e := &entries[i]
		cur := e.m.eventID()
		if j.hasResume && cur != 0 && cur <= j.resume {
			delivered = append(delivered, e.key)
			continue
		}
		j.mailPending = true
		if j.hasResume && cur > j.resume && cur <= j.replayTo {
			continue // the replay carries it
		}
		if cur != 0 {
			if err := deleteRecord(tx, cur); err != nil {
				return err
			}
		}
		ev, err := h.record(tx, nick, "", e.m.offlineText())
		if err != nil {
			return err
		}
		e.m.ID = ev.id
		if err := putMail(tx, nick, e); err != nil {
			return err
		}
		h.toUser(nick, ev) // other streams of nick, if any
	}
	return h.dropMail(tx, nick, delivered)
}

// handleAck removes from nick's mailbox the messages whose current event has
// from < id <= to: a stream of nick is known to have delivered those.
func (h *hub) handleAck(tx *bolt.Tx, nick string, from, to uint64) error {
	if h.mailboxes[nick] == 0 {
		return nil
	}
	entries, err := readMail(tx, nick)
	if err != nil {
		return err
	}
	var delivered [][]byte
	for _, e := range entries {
		if id := e.m.eventID(); id > from && id <= to {
			delivered = append(delivered, e.key)
		}
	}
	return h.dropMail(tx, nick, delivered)
}

// dropMail deletes delivered messages from nick's mailbox and counts them out.
func (h *hub) dropMail(tx *bolt.Tx, nick string, keys [][]byte) error {
	if len(keys) == 0 {
		return nil
	}
	left := h.mailboxes[nick] - len(keys)
	if err := deleteMail(tx, nick, keys, left <= 0); err != nil {
		return err
	}
	if left <= 0 {
		delete(h.mailboxes, nick)
	} else {
		h.mailboxes[nick] = left
	}
	return nil
}

func (h *hub) handleLeave(tx *bolt.Tx, c *conn) error {
	u := h.users[c.nick]
	if u == nil {
		return nil
	}
	if _, ok := u.conns[c]; !ok {
		return nil
	}
	delete(u.conns, c)
	h.cut(c, "closed")
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
			case h.reqs <- &request{kind: reqGrace, nick: nick, gen: gen}:
			case <-h.quit:
			}
		})
	})
	return nil
}

func (h *hub) goOffline(tx *bolt.Tx, nick string) error {
	delete(h.users, nick)
	ev, err := h.record(tx, "", nick, nick+" has left.")
	if err != nil {
		return err
	}
	h.toAll(nick, ev)
	return nil
}
