// Package room holds the chat's rules as one deterministic state machine:
// who is online, the leave grace, coalesced presence notices, the offline
// mailboxes and their limits, and the source article's wording and its
// forms of a post (post.go).
//
// A Machine takes one Request at a time (a post, a stream opened or
// closed, a leave grace over, a mailbox acknowledged, a node gone, the
// presence window over), each with its place in the log (Seq) and the
// log's time (At), and returns what it did: the events to record and
// deliver with their addressees, the mailbox changes, and the refusal if
// there is one. It does no I/O, reads no clock and starts no goroutine:
// its answer depends on its state and the request alone, so every node
// that applies the same log holds the same state and makes the same events
// with the same ids. One chat node feeds it from its own write-ahead log;
// the nodes of a NATS cluster feed it from the JetStream stream.
package room

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// Config is the rules' parameters. Every node of a chat must use the same.
type Config struct {
	// Grace is how long a user whose last stream closed stays online
	// (0: it leaves at once).
	Grace time.Duration
	// Retention is how long a mail waits for its receiver (0: for ever).
	Retention time.Duration
	// PresenceWindow coalesces presence notices (0: every one told alone).
	PresenceWindow time.Duration
	// MaxMailbox is the most mails waiting for one user.
	MaxMailbox int
	// MaxMailboxes is the most users with mail waiting.
	MaxMailboxes int
	// MaxMailPerAddr and MaxMailBytesPerAddr bound the mails (their count
	// and their text's bytes) waiting from one sending address; past them
	// a post is refused (SenderMailFull), or with EvictMail the address's
	// oldest unread mail makes room (0: no limit). Posts of no known
	// address (Addr "") are bound by the global limits alone.
	MaxMailPerAddr      int
	MaxMailBytesPerAddr int64
	// EvictMail lets mail already accepted leave to make room: the
	// sender's own oldest past its limits, and, when MaxMailboxes users
	// have mail waiting, the oldest of the address holding the most.
	// Without it a full mailbox refuses the new mail and keeps the old.
	EvictMail bool
	// IDsPerRequest numbers events by their request: 0, one after the
	// other; n > 0, the events of the request at Seq s get ids from s·n+1
	// (a node that starts on a log whose first records expired then still
	// makes the ids the others make). A request makes at most
	// MaxMailbox+6 events.
	IDsPerRequest uint64
}

// Kind is what a request asks.
type Kind uint8

const (
	// Post: Nick sends Text to To (a nick or "all") from address Addr at Sent.
	Post Kind = iota + 1
	// Open: a stream of Nick opens on Node (Token names it there), having
	// seen the events up to Resume when HasResume.
	Open
	// Close: the stream Node/Token of Nick closed.
	Close
	// GraceOver: the leave grace Gen of Nick ran out.
	GraceOver
	// Ack: Nick's events with From < id <= Upto were delivered.
	Ack
	// NodeGone: node Node is gone with its streams.
	NodeGone
	// Flush: the presence window is over: tell the notices waiting.
	Flush
	// Tick: nothing but the time passing (the mails past the retention leave).
	Tick
)

// Request is one input of the machine.
type Request struct {
	Kind Kind
	Seq  uint64    // its place in the log, increasing
	At   time.Time // the log's time for it, never decreasing

	Nick  string
	To    string // Post
	Text  string // Post
	Addr  string // Post: the sender's address
	Sent  time.Time
	Node  string // Open, Close, NodeGone
	Token uint64 // Open, Close
	// Resume and HasResume: Open. From, Upto: Ack. Gen: GraceOver.
	Resume    uint64
	HasResume bool
	From      uint64
	Upto      uint64
	Gen       uint64
}

// Event is a recorded event: To receives it, or (To == "") everyone but Except.
type Event struct {
	ID     uint64
	To     string
	Except string
	Text   string
}

// VisibleTo reports whether e is addressed to nick.
func (e *Event) VisibleTo(nick string) bool {
	if e.To == "" {
		return e.Except != nick
	}
	return e.To == nick
}

// Mail is a private message waiting for its receiver. Orig is the id of the
// event it was recorded under when sent (0: its receiver was offline); ID
// the id of its latest offering at a login (0: never offered).
type Mail struct {
	Key        uint64 // its place among all mails, increasing
	Orig, ID   uint64
	From, Addr string
	Text       string
	Sent       time.Time
}

// EventID is the id of the event that carries m now (0: none).
func (m *Mail) EventID() uint64 {
	if m.ID != 0 {
		return m.ID
	}
	return m.Orig
}

// Text is m as delivered at a login.
func (m *Mail) OfflineText() string { return OfflineText(m.From, m.Sent, m.Text) }

// MailChange is one change of a mailbox: Mail put (added or changed) into
// Nick's mailbox, or dropped from it (Drop; Mail.Key names it).
type MailChange struct {
	Nick string
	Mail Mail
	Drop bool
}

// RefusalKind sorts refusals.
type RefusalKind uint8

const (
	// MailboxFull: the offline receiver's mailbox is full.
	MailboxFull RefusalKind = iota + 1
	// StoreFull: too many users have mail waiting.
	StoreFull
	// SenderMailFull: the sender's address has its most mail waiting.
	SenderMailFull
	// Unavailable: the stream's node was declared gone.
	Unavailable
)

// Refusal is a request refused, with its full message.
type Refusal struct {
	Kind RefusalKind
	Text string
}

func (r *Refusal) Error() string { return r.Text }

// Joined is what a new stream writes before its live events: Notice when
// there is one, the events it missed (Resume < id <= ReplayTo, when
// HasResume: the host's history has them), Preamble (the welcome lines),
// then the mails offered (MailFrom < id <= MailTo, in the history too).
// MailPending: mails it writes wait in the mailbox until an Ack.
type Joined struct {
	Notice      string
	Resume      uint64
	HasResume   bool
	ReplayTo    uint64
	Preamble    []Event
	MailFrom    uint64
	MailTo      uint64
	MailPending bool
}

// Grace is a leave grace started: GraceOver{Nick, Gen} is due after the
// grace. Origin is the node whose stream closed last ("": a node gone).
type Grace struct {
	Nick   string
	Gen    uint64
	Origin string
}

// Output is what a request did. A new stream (Open) receives none of
// Events: it writes Joined.
type Output struct {
	Events  []Event
	Deleted []uint64 // events superseded (an offered mail's earlier event)
	Mail    []MailChange
	Refusal *Refusal
	Offline bool    // Post: the receiver was offline, the message waits
	Joined  *Joined // Open
	Graces  []Grace
	// FlushAt, when not zero: a Flush is due then.
	FlushAt time.Time
}

// MaxOnlineShown is how many names a welcome's "now online" lists at most.
const MaxOnlineShown = 50

// Stream names an open stream: its node and its token there.
type Stream struct {
	Node  string
	Token uint64
}

type user struct {
	streams   map[Stream]struct{}
	zeroSince uint64 // the Seq that closed its last stream: its grace's Gen (0: open)
}

type holder struct {
	count int
	bytes int64
}

// queued is a mail in the order of arrival, for the retention and evictions.
type queued struct {
	nick, addr string
	key        uint64
	sent       time.Time
}

const (
	presenceJoin = iota
	presenceLeave
)

type presence struct {
	kind  int
	nicks []string
	last  time.Time
	timer bool
}

// Machine is the chat's state. Its zero value is not usable: see New.
type Machine struct {
	cfg     Config
	last    uint64 // the last event id issued
	mailKey uint64
	users   map[string]*user
	names   []string // the keys of users, sorted: a welcome's first names without a walk of every user
	boxes   map[string][]*Mail
	addrs   map[string]holder
	queue   []queued // every mail by arrival (and the stale entries of mail gone since)
	head    int
	total   int  // mails waiting
	unrest  bool // mails were restored: queue is to be sorted
	gone    map[string]bool
	pres    presence

	// A request being applied.
	in       *Request
	out      *Output
	cur      Request
	res      Output
	events   []Event // the array of the Outputs' Events
	flushing bool

	// While a transaction is open (Begin), how to undo it.
	tx   bool
	undo []func()
	save saved
}

type saved struct {
	last, mailKey uint64
	head, qlen    int
	pres          presence
}

// New is a machine with no user and no mail; last is the last event id
// issued before (a store's sequence).
func New(cfg Config, last uint64) *Machine {
	return &Machine{cfg: cfg, last: last, users: map[string]*user{}, boxes: map[string][]*Mail{},
		addrs: map[string]holder{}, gone: map[string]bool{}}
}

// Restore puts back a mail kept from before (a store's, at start). Mails
// come in the order of their keys.
func (m *Machine) Restore(nick string, ml Mail) {
	p := ml
	m.boxes[nick] = append(m.boxes[nick], &p)
	m.mailKey = max(m.mailKey, ml.Key)
	h := m.addrs[ml.Addr]
	h.count++
	h.bytes += int64(len(ml.Text))
	m.addrs[ml.Addr] = h
	m.total++
	m.queue = append(m.queue, queued{nick: nick, addr: ml.Addr, key: ml.Key, sent: ml.Sent})
	m.unrest = true
}

// Last is the last event id issued.
func (m *Machine) Last() uint64 { return m.last }

// Mailboxes is how many users have mail waiting.
func (m *Machine) Mailboxes() int { return len(m.boxes) }

// Mailbox is a copy of nick's waiting mail, oldest first.
func (m *Machine) Mailbox(nick string) []Mail {
	out := make([]Mail, 0, len(m.boxes[nick]))
	for _, ml := range m.boxes[nick] {
		out = append(out, *ml)
	}
	return out
}

// MailCount is how many mails wait for nick.
func (m *Machine) MailCount(nick string) int { return len(m.boxes[nick]) }

// MailboxNicks lists the users with mail waiting, sorted.
func (m *Machine) MailboxNicks() []string {
	out := make([]string, 0, len(m.boxes))
	for n := range m.boxes {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Online reports whether nick is online (streams open, or within its grace)
// and how many streams it has open.
func (m *Machine) Online(nick string) (bool, int) {
	u := m.users[nick]
	if u == nil {
		return false, 0
	}
	return true, len(u.streams)
}

// InGrace reports whether nick's leave grace gen is still running: it has
// no stream open since the request Gen closed its last.
func (m *Machine) InGrace(nick string, gen uint64) bool {
	u := m.users[nick]
	return u != nil && len(u.streams) == 0 && u.zeroSince == gen
}

// GraceOf is the leave grace nick is in (ok false: it is not in one).
func (m *Machine) GraceOf(nick string) (gen uint64, ok bool) {
	u := m.users[nick]
	if u == nil || len(u.streams) > 0 {
		return 0, false
	}
	return u.zeroSince, true
}

// PresenceWaiting reports whether presence notices wait for a Flush.
func (m *Machine) PresenceWaiting() bool { return len(m.pres.nicks) > 0 }

// Dump is the state as text, the same on every machine that applied the
// same requests (for tests).
func (m *Machine) Dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "last %d\n", m.last)
	for _, nick := range slices.Sorted(maps.Keys(m.users)) {
		u := m.users[nick]
		fmt.Fprintf(&b, "user %s open %d zeroSince %d\n", nick, len(u.streams), u.zeroSince)
	}
	for _, nick := range m.MailboxNicks() {
		for _, ml := range m.boxes[nick] {
			fmt.Fprintf(&b, "mail %s %d %d/%d %s %s %q\n", nick, ml.Key, ml.Orig, ml.ID, ml.From, ml.Addr, ml.Text)
		}
	}
	fmt.Fprintf(&b, "presence %d %q\n", m.pres.kind, m.pres.nicks)
	return b.String()
}

// Streams is, for every user online, how many streams it has open.
func (m *Machine) Streams() map[string]int {
	out := make(map[string]int, len(m.users))
	for nick, u := range m.users {
		out[nick] = len(u.streams)
	}
	return out
}

// Users is how many users are online.
func (m *Machine) Users() int { return len(m.users) }

// NodesWithStreams lists the nodes that hold open streams, sorted.
func (m *Machine) NodesWithStreams() []string {
	seen := map[string]bool{}
	for _, u := range m.users {
		for s := range u.streams {
			seen[s.Node] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Begin opens a transaction: Rollback undoes every request applied since.
func (m *Machine) Begin() {
	m.tx = true
	m.undo = m.undo[:0]
	// pres.nicks is only appended to (a flush starts a new slice): the
	// saved slice still holds what it held.
	m.save = saved{last: m.last, mailKey: m.mailKey, head: m.head, qlen: len(m.queue), pres: m.pres}
}

// Commit closes the transaction, keeping its changes.
func (m *Machine) Commit() {
	m.tx = false
	clear(m.undo)
	m.undo = m.undo[:0]
	m.compact()
}

// compact drops the queue's entries of mail gone since, once they are
// more than the mail waiting (never within a transaction: Rollback cuts
// the queue back to its length).
func (m *Machine) compact() {
	if m.tx || len(m.queue)-m.head <= 2*m.total+1024 {
		return
	}
	q := m.queue[:0]
	for _, e := range m.queue[m.head:] {
		if m.find(e.nick, e.key) >= 0 {
			q = append(q, e)
		}
	}
	clear(m.queue[len(q):])
	m.queue, m.head = q, 0
}

// find is the index of nick's mail key in its mailbox, or -1.
func (m *Machine) find(nick string, key uint64) int {
	box := m.boxes[nick]
	i, ok := slices.BinarySearchFunc(box, key, func(ml *Mail, k uint64) int { return cmp.Compare(ml.Key, k) })
	if !ok {
		return -1
	}
	return i
}

// Rollback closes the transaction, undoing its changes.
func (m *Machine) Rollback() {
	for i := len(m.undo) - 1; i >= 0; i-- {
		m.undo[i]()
	}
	s := m.save
	m.last, m.mailKey, m.head, m.queue = s.last, s.mailKey, s.head, m.queue[:s.qlen]
	m.pres = s.pres
	m.Commit()
}

func (m *Machine) onUndo(f func()) {
	if m.tx {
		m.undo = append(m.undo, f)
	}
}

// Apply applies one request. The Output's Events are valid until the next
// Apply (their array is reused).
func (m *Machine) Apply(in Request) Output {
	m.cur = in
	clear(m.events) // the last Output's, no longer valid
	m.res = Output{Events: m.events[:0]}
	m.in, m.out = &m.cur, &m.res
	defer m.done()
	if k := m.cfg.IDsPerRequest; k > 0 && m.last < in.Seq*k {
		m.last = in.Seq * k
	}
	if m.unrest {
		slices.SortStableFunc(m.queue[m.head:], func(a, b queued) int { return cmp.Compare(a.key, b.key) })
		m.unrest = false
	}
	m.expire(in.At)
	switch in.Kind {
	case Post:
		m.post()
	case Open:
		m.open()
	case Close:
		m.close(in.Nick, Stream{in.Node, in.Token})
	case GraceOver:
		if u := m.users[in.Nick]; u != nil && len(u.streams) == 0 && u.zeroSince == in.Gen {
			m.goOffline(in.Nick)
		}
	case Ack:
		m.dropMail(in.Nick, func(ml *Mail) bool { id := ml.EventID(); return id > in.From && id <= in.Upto })
	case NodeGone:
		m.nodeGone(in.Node)
	case Flush:
		m.setPres(func(p *presence) { p.timer = false })
		m.flushPresence()
	case Tick:
	default:
		panic(fmt.Sprintf("room: unknown request kind %d", in.Kind))
	}
	return m.res
}

// done ends an Apply.
func (m *Machine) done() {
	m.events = m.res.Events
	m.cur = Request{}
	m.compact()
}

// record makes an event; waiting presence notices come first, so nobody
// hears from a user before hearing that it joined.
func (m *Machine) record(to, except, text string) uint64 {
	if len(m.pres.nicks) > 0 && !m.flushing {
		m.flushing = true
		m.flushPresence()
		m.flushing = false
	}
	m.last++
	m.out.Events = append(m.out.Events, Event{ID: m.last, To: to, Except: except, Text: text})
	return m.last
}

// setUser replaces nick's user (nil: offline), undoably. Users are never
// changed in place: a change is a copy.
func (m *Machine) setUser(nick string, u *user) {
	old, had := m.users[nick]
	m.onUndo(func() {
		if had {
			m.users[nick] = old
		} else {
			delete(m.users, nick)
		}
		m.index(nick, had)
	})
	if u == nil {
		delete(m.users, nick)
	} else {
		m.users[nick] = u
	}
	m.index(nick, u != nil)
}

// index keeps nick in names when online is true, out of them otherwise.
func (m *Machine) index(nick string, online bool) {
	i, found := slices.BinarySearch(m.names, nick)
	switch {
	case online && !found:
		m.names = slices.Insert(m.names, i, nick)
	case !online && found:
		m.names = slices.Delete(m.names, i, i+1)
	}
}

func (u *user) clone() *user {
	if u == nil {
		return &user{streams: map[Stream]struct{}{}}
	}
	c := &user{streams: make(map[Stream]struct{}, len(u.streams)+1), zeroSince: u.zeroSince}
	for s := range u.streams {
		c.streams[s] = struct{}{}
	}
	return c
}

func (m *Machine) setPres(f func(p *presence)) { f(&m.pres) }

// post stores and delivers a post: to all, to an online user (and the echo
// to its sender), or into an offline user's mailbox.
func (m *Machine) post() {
	in := m.in
	if in.To == "all" {
		m.record("", "", ToAllText(in.Nick, in.Text))
		return
	}
	target := m.users[in.To]
	if target == nil {
		if r := m.makeRoom(in.To, in.Addr, len(in.Text)); r != nil {
			m.out.Refusal = r
			return
		}
		m.addMail(in.To, Mail{From: in.Nick, Addr: in.Addr, Text: in.Text, Sent: in.Sent})
		m.record(in.Nick, "", OfflineEchoText(in.To, in.Text))
		m.out.Offline = true
		return
	}
	if in.To != in.Nick {
		id := m.record(in.To, "", PrivateText(in.Nick, in.Text))
		if len(target.streams) == 0 && m.makeRoom(in.To, in.Addr, len(in.Text)) == nil {
			// Within the leave grace: a resume replays the event, a fresh
			// login gets it from the mailbox instead.
			m.addMail(in.To, Mail{Orig: id, From: in.Nick, Addr: in.Addr, Text: in.Text, Sent: in.Sent})
		}
	}
	m.record(in.Nick, "", EchoText(in.To, in.Text))
}

// makeRoom makes room in nick's mailbox for a mail of size bytes from addr,
// or says why there is none: the mail waiting from the sender's address
// is at its limits, or too many users have mail waiting. With EvictMail,
// the sender's address over its own limits gives up its oldest unread
// mail instead, and when too many users have mail waiting the address
// holding the most gives up its oldest.
func (m *Machine) makeRoom(nick, addr string, size int) *Refusal {
	if len(m.boxes[nick]) >= m.cfg.MaxMailbox {
		return &Refusal{MailboxFull, fmt.Sprintf("mailbox full: %s is offline and already has %d messages waiting, the most kept per user", nick, m.cfg.MaxMailbox)}
	}
	if size64 := int64(size); addr != "" && (m.cfg.MaxMailPerAddr > 0 || m.cfg.MaxMailBytesPerAddr > 0) {
		for {
			h := m.addrs[addr]
			over := m.cfg.MaxMailPerAddr > 0 && h.count >= m.cfg.MaxMailPerAddr ||
				m.cfg.MaxMailBytesPerAddr > 0 && h.count > 0 && h.bytes+size64 > m.cfg.MaxMailBytesPerAddr
			if over && !m.cfg.EvictMail {
				return &Refusal{SenderMailFull, fmt.Sprintf("too much mail waiting from your address: %d messages of %d bytes wait for offline users, the most kept per address is %d messages and %d bytes; %s's message was not stored, retry once they logged in or their messages expired (retention %v)",
					h.count, h.bytes, m.cfg.MaxMailPerAddr, m.cfg.MaxMailBytesPerAddr, nick, m.cfg.Retention)}
			}
			if !over || !m.evictOldest(addr) {
				break
			}
		}
	}
	for len(m.boxes[nick]) == 0 && len(m.boxes) >= m.cfg.MaxMailboxes {
		flooder, n := m.biggestHolder(addr)
		if !m.cfg.EvictMail || n <= 1 || !m.evictOldest(flooder) {
			return &Refusal{StoreFull, fmt.Sprintf("chat store full: %d offline users already have messages waiting, the most kept; %s's message was not stored, retry once they logged in or their messages expired (retention %v)", len(m.boxes), nick, m.cfg.Retention)}
		}
	}
	return nil
}

// biggestHolder is the address with the most mail waiting (the sender's
// when tied; else the least by name) and how much it holds. The mail of
// no known address ("": posts handed to the broker by a program) is never
// taken for a flood.
func (m *Machine) biggestHolder(sender string) (string, int) {
	best, n := sender, m.addrs[sender].count
	if sender == "" {
		n = 0
	}
	for a, h := range m.addrs {
		if a == "" {
			continue
		}
		if h.count > n || h.count == n && a < best && best != sender {
			best, n = a, h.count
		}
	}
	return best, n
}

// evictOldest drops addr's oldest waiting mail; false when it has none.
func (m *Machine) evictOldest(addr string) bool {
	for i := m.head; i < len(m.queue); i++ {
		q := m.queue[i]
		if q.addr != addr || m.find(q.nick, q.key) < 0 {
			continue
		}
		if m.dropMail(q.nick, func(ml *Mail) bool { return ml.Key == q.key }) > 0 {
			return true
		}
	}
	return false
}

func (m *Machine) addMail(nick string, ml Mail) {
	m.mailKey++
	ml.Key = m.mailKey
	p := &ml
	box := m.boxes[nick]
	n := len(box)
	m.onUndo(func() {
		if n == 0 {
			delete(m.boxes, nick)
		} else {
			m.boxes[nick] = box[:n]
		}
	})
	m.boxes[nick] = append(box, p)
	m.account(ml.Addr, 1, int64(len(ml.Text)))
	m.queue = append(m.queue, queued{nick: nick, addr: ml.Addr, key: ml.Key, sent: ml.Sent})
	m.out.Mail = append(m.out.Mail, MailChange{Nick: nick, Mail: ml})
}

func (m *Machine) account(addr string, n int, bytes int64) {
	old, had := m.addrs[addr]
	m.onUndo(func() {
		if had {
			m.addrs[addr] = old
		} else {
			delete(m.addrs, addr)
		}
	})
	m.total += n
	m.onUndo(func() { m.total -= n })
	h := holder{old.count + n, old.bytes + bytes}
	if h.count <= 0 {
		delete(m.addrs, addr)
	} else {
		m.addrs[addr] = h
	}
}

// setBox replaces nick's mailbox, undoably (a mailbox is never changed in
// place once it was shared: see addMail's undo).
func (m *Machine) setBox(nick string, box []*Mail) {
	old, had := m.boxes[nick]
	m.onUndo(func() {
		if had {
			m.boxes[nick] = old
		} else {
			delete(m.boxes, nick)
		}
	})
	if len(box) == 0 {
		delete(m.boxes, nick)
	} else {
		m.boxes[nick] = box
	}
}

// dropMail removes nick's mails for which drop is true; it returns how many.
func (m *Machine) dropMail(nick string, drop func(*Mail) bool) int {
	box := m.boxes[nick]
	var kept []*Mail
	n := 0
	for i, ml := range box {
		if !drop(ml) {
			if kept != nil {
				kept = append(kept, ml)
			}
			continue
		}
		if kept == nil {
			kept = append(make([]*Mail, 0, len(box)-1), box[:i]...)
		}
		n++
		m.account(ml.Addr, -1, -int64(len(ml.Text)))
		m.out.Mail = append(m.out.Mail, MailChange{Nick: nick, Mail: *ml, Drop: true})
	}
	if n > 0 {
		m.setBox(nick, kept)
	}
	return n
}

// expire drops the mails sent before the retention (in the order they
// came: a mail behind one sent later waits for it).
func (m *Machine) expire(at time.Time) {
	if m.cfg.Retention <= 0 {
		return
	}
	cut := at.Add(-m.cfg.Retention)
	for m.head < len(m.queue) {
		q := m.queue[m.head]
		if !q.sent.Before(cut) {
			break
		}
		// Every mail of its box sent before the cut leaves with it (a
		// mailbox is in the order its mail came).
		if box := m.boxes[q.nick]; len(box) > 0 && box[0].Sent.Before(cut) {
			m.dropMail(q.nick, func(ml *Mail) bool { return ml.Sent.Before(cut) })
		}
		m.head++
	}
}

// open adds a stream: the welcome lines, the waiting mail, and "has joined."
// for the others when the user was offline.
func (m *Machine) open() {
	in := m.in
	if m.gone[in.Node] {
		m.out.Refusal = &Refusal{Unavailable, "chat: this node was declared gone by the cluster and rejoins as a new one: log in again"}
		return
	}
	nick := in.Nick
	u := m.users[nick]
	wasOnline := u != nil
	if !wasOnline && len(m.pres.nicks) > 0 && m.pres.kind == presenceLeave {
		// Leaves from before this login are told to those who were there.
		m.flushPresence()
	}
	// A resume id is the client's claim about what it saw, never an input
	// to the ids: one above the last id issued cannot have been seen here.
	j := &Joined{Resume: in.Resume, HasResume: in.HasResume, ReplayTo: m.last}
	if in.HasResume && in.Resume > m.last {
		j.Resume, j.HasResume = 0, false
		j.Notice = fmt.Sprintf("resume id %d is above the last event id issued here (%d): nothing was missed; the ids of this stream start again below it", in.Resume, m.last)
	}
	// Who is online: every name when there are few, else the count and
	// MaxOnlineShown of them (the first by name).
	total := len(m.users)
	if u != nil && len(u.streams) == 0 {
		total-- // nick itself, back within its leave grace
	}
	online := make([]string, 0, min(total, MaxOnlineShown))
	for _, n := range m.names {
		if len(online) == MaxOnlineShown {
			break
		}
		if n == nick && len(u.streams) == 0 {
			continue
		}
		online = append(online, n)
	}
	m.last++
	j.Preamble = append(j.Preamble, Event{ID: m.last, To: nick, Text: WelcomeText(nick)})
	m.last++
	j.Preamble = append(j.Preamble, Event{ID: m.last, To: nick, Text: OnlineText(online, total)})
	j.MailFrom = m.last
	m.offerMail(nick, j)
	j.MailTo = m.last
	u = u.clone()
	u.streams[Stream{in.Node, in.Token}] = struct{}{}
	u.zeroSince = 0
	m.setUser(nick, u)
	if !wasOnline {
		m.announce(presenceJoin, nick)
	}
	m.out.Joined = j
}

// offerMail gives nick's waiting mail to a new stream. A mail its resume id
// covers was delivered: it leaves. One the replay carries stays as it is.
// Any other is recorded again under a new id (the ids of a stream only
// grow), its earlier event deleted. All offered stay until an Ack.
func (m *Machine) offerMail(nick string, j *Joined) {
	box := m.boxes[nick]
	if len(box) == 0 {
		return
	}
	m.dropMail(nick, func(ml *Mail) bool {
		cur := ml.EventID()
		return j.HasResume && cur != 0 && cur <= j.Resume
	})
	box = slices.Clone(m.boxes[nick])
	changed := false
	for i, ml := range box {
		j.MailPending = true
		cur := ml.EventID()
		if j.HasResume && cur > j.Resume && cur <= j.ReplayTo {
			continue // the replay carries it
		}
		if cur != 0 {
			m.out.Deleted = append(m.out.Deleted, cur)
		}
		c := *ml
		c.ID = m.record(nick, "", c.OfflineText())
		box[i] = &c
		changed = true
		m.out.Mail = append(m.out.Mail, MailChange{Nick: nick, Mail: c})
	}
	if changed {
		m.setBox(nick, box)
	}
}

// close removes a stream; the user's last one starts the leave grace (or
// leaves at once without one).
func (m *Machine) close(nick string, s Stream) {
	u := m.users[nick]
	if u == nil {
		return
	}
	if _, ok := u.streams[s]; !ok {
		return
	}
	u = u.clone()
	delete(u.streams, s)
	m.setUser(nick, u)
	if len(u.streams) == 0 {
		m.startGrace(nick, s.Node, u)
	}
}

func (m *Machine) startGrace(nick, origin string, u *user) {
	if m.cfg.Grace <= 0 {
		m.goOffline(nick)
		return
	}
	u.zeroSince = m.in.Seq
	m.out.Graces = append(m.out.Graces, Grace{Nick: nick, Gen: m.in.Seq, Origin: origin})
}

// nodeGone closes every stream of node.
func (m *Machine) nodeGone(node string) {
	if m.gone[node] {
		return
	}
	m.gone[node] = true
	m.onUndo(func() { delete(m.gone, node) })
	nicks := make([]string, 0)
	for nick, u := range m.users {
		for s := range u.streams {
			if s.Node == node {
				nicks = append(nicks, nick)
				break
			}
		}
	}
	sort.Strings(nicks)
	for _, nick := range nicks {
		u := m.users[nick].clone()
		for s := range u.streams {
			if s.Node == node {
				delete(u.streams, s)
			}
		}
		m.setUser(nick, u)
		if len(u.streams) == 0 {
			m.startGrace(nick, "", u)
		}
	}
}

func (m *Machine) goOffline(nick string) {
	m.setUser(nick, nil)
	m.announce(presenceLeave, nick)
}

// Presence notices coalesce: a join or leave with no notice in the last
// window (PresenceWindow, one more per 1,000 users online) is told at
// once, as in the article ("X has joined."); the ones that follow within
// the window wait and are told together at its end ("A, B and 312 others
// joined."), so N logins cost N/window notices, not N² deliveries. Waiting
// notices are told before any other event (a post, a notice of the other
// kind).
func (m *Machine) announce(kind int, nick string) {
	if len(m.pres.nicks) > 0 && m.pres.kind != kind {
		m.flushPresence()
	}
	now := m.in.At
	win := m.cfg.PresenceWindow * time.Duration(max(1, len(m.users)/1000))
	if m.cfg.PresenceWindow <= 0 || len(m.pres.nicks) == 0 && now.Sub(m.pres.last) >= win {
		m.pres.kind, m.pres.nicks = kind, []string{nick}
		m.flushPresence()
		return
	}
	m.pres.kind = kind
	m.pres.nicks = append(m.pres.nicks, nick)
	if !m.pres.timer {
		m.pres.timer = true
		m.out.FlushAt = m.pres.last.Add(win)
	}
}

// flushPresence tells the waiting presence notices, in one event.
func (m *Machine) flushPresence() {
	n := len(m.pres.nicks)
	if n == 0 {
		return
	}
	var text, except string
	if n == 1 {
		except = m.pres.nicks[0]
		if m.pres.kind == presenceJoin {
			text = JoinedText(except)
		} else {
			text = LeftText(except)
		}
	} else {
		text = ManyText(m.pres.nicks, m.pres.kind == presenceJoin)
	}
	// A new slice (Begin saved the old one).
	m.pres.nicks = nil
	m.pres.last = m.in.At
	m.flushing = true
	m.record("", except, text)
	m.flushing = false
}
