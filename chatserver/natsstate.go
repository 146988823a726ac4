package chatserver

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/store"
)

// clusterState is the chat's state as every node derives it from the
// stream: who is online on which node, the mailboxes, and the history a
// resume replays. Every node applies the same messages in the same order,
// and each change depends only on the state, the message, its sequence and
// its stream timestamp, so every node holds the same state and derives the
// same events with the same ids. Only the deliveries differ: each node
// hands an event to the streams connected to it.
type clusterState struct {
	opts    *Options
	users   map[string]*clusterUser // online, or within the leave grace
	mail    map[string][]clusterMail
	history []clusterEvent // by id, within the retention
	pruned  uint64         // the last id whose events may be missing from history
	started bool           // a message was applied
	applied uint64         // the last sequence applied
	gone    map[string]bool
}

// clusterUser is an online user: its open streams per node.
type clusterUser struct {
	streams   map[string]map[uint64]struct{} // node → the open tokens of its streams
	zeroSince uint64                         // the sequence that closed its last stream (0: open)
}

func (u *clusterUser) open() int {
	n := 0
	for _, s := range u.streams {
		n += len(s)
	}
	return n
}

// clusterMail is a private message waiting for an offline user; id is the
// sequence of its post, which is also the id of its event in the history.
type clusterMail struct {
	id   uint64
	m    store.Mail
	time time.Time
}

// clusterEvent is an event a resume can replay: to == "" addresses everyone but except.
type clusterEvent struct {
	id     uint64
	at     time.Time
	to     string
	except string
	text   string
}

func newClusterState(o *Options) *clusterState {
	return &clusterState{opts: o, users: map[string]*clusterUser{}, mail: map[string][]clusterMail{}, gone: map[string]bool{}}
}

// nodesWithStreams lists the nodes that hold open streams.
func (st *clusterState) nodesWithStreams() []string {
	seen := map[string]bool{}
	for _, u := range st.users {
		for node, s := range u.streams {
			if len(s) > 0 {
				seen[node] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for node := range seen {
		out = append(out, node)
	}
	return out
}

// apply changes the state by m, stored at seq at time at, and delivers the
// events it makes to n's streams. w is the waiter when n published m.
func (st *clusterState) apply(n *natsNode, seq uint64, at time.Time, m *natsMsg, w *natsWaiter) result {
	if !st.started {
		// The stream's first messages may have expired before this node
		// started: their events are not in its history.
		st.started, st.pruned = true, seq-1
	}
	st.applied = seq
	st.expire(at)
	switch m.Kind {
	case "post":
		return st.post(n, seq, at, m)
	case "open":
		return st.open(n, seq, at, m, w)
	case "close":
		st.closeStream(n, seq, at, m.Nick, m.Node, m.Resume)
	case "grace":
		if u := st.users[m.Nick]; u != nil && u.open() == 0 && u.zeroSince == m.Resume {
			st.leaveNow(n, seq, at, m.Nick)
		}
	case "ack":
		st.dropMail(m.Nick, func(id uint64) bool { return id > m.Resume && id <= m.Upto })
	case "gone":
		st.nodeGone(n, seq, at, m.Gone)
	default:
		return result{err: fmt.Errorf("chat NATS: unknown message kind %q", m.Kind)}
	}
	return result{}
}

// expire drops the history older than the retention, by the stream's clock.
func (st *clusterState) expire(at time.Time) {
	cut := at.Add(-st.opts.Retention)
	i := sort.Search(len(st.history), func(i int) bool { return !st.history[i].at.Before(cut) })
	if i > 0 {
		st.pruned = max(st.pruned, st.history[i-1].id)
		st.history = slices.Delete(st.history, 0, i)
	}
}

// box is nick's mailbox, without the messages older than the retention
// (a mailbox is in the order of its messages).
func (st *clusterState) box(nick string, at time.Time) []clusterMail {
	box := st.mail[nick]
	cut := at.Add(-st.opts.Retention)
	i := 0
	for i < len(box) && box[i].time.Before(cut) {
		i++
	}
	if i > 0 {
		box = slices.Delete(box, 0, i)
		st.setBox(nick, box)
	}
	return box
}

func (st *clusterState) setBox(nick string, box []clusterMail) {
	if len(box) == 0 {
		delete(st.mail, nick)
	} else {
		st.mail[nick] = box
	}
}

// dropMail removes nick's mail for which drop is true.
func (st *clusterState) dropMail(nick string, drop func(id uint64) bool) {
	if box := st.mail[nick]; len(box) > 0 {
		st.setBox(nick, slices.DeleteFunc(box, func(cm clusterMail) bool { return drop(cm.id) }))
	}
}

// record keeps an event for replays and delivers it to n's streams.
func (st *clusterState) record(n *natsNode, id uint64, at time.Time, to, except, text string) {
	st.history = append(st.history, clusterEvent{id: id, at: at, to: to, except: except, text: text})
	ev := newEvent(id, text)
	if to != "" {
		n.deliverTo(to, ev)
	} else {
		n.deliverAll(except, ev)
	}
}

func (st *clusterState) post(n *natsNode, seq uint64, at time.Time, m *natsMsg) result {
	p := Post{From: m.Nick, To: m.To, Text: m.Text, Time: time.Unix(0, m.Time)}
	if p.To == "all" {
		st.record(n, seq, at, "", "", toAllText(p.From, p.Text))
		return result{}
	}
	target := st.users[p.To]
	st.box(p.To, at)
	if target == nil && p.To != p.From {
		if len(st.mail[p.To]) == 0 && len(st.mail) >= st.opts.MaxMailboxes {
			return result{err: refuse(ErrStoreFull, "chat store full: %d offline users already have messages waiting, the most kept; %s's message was not stored, retry once they logged in or their messages expired (retention %v)", len(st.mail), p.To, st.opts.Retention)}
		}
		if len(st.mail[p.To]) >= st.opts.MaxMailbox {
			return result{err: refuse(ErrMailboxFull, "mailbox full: %s is offline and already has %d messages waiting, the most kept per user", p.To, st.opts.MaxMailbox)}
		}
		cm := clusterMail{id: seq, m: store.Mail{From: p.From, Text: p.Text, Time: m.Time}, time: at}
		st.mail[p.To] = append(st.mail[p.To], cm)
		st.history = append(st.history, clusterEvent{id: seq, at: at, to: p.To, text: offlineText(&cm.m)})
		st.record(n, seq, at, p.From, "", offlineEchoText(p.To, p.Text))
		return result{offline: true}
	}
	if p.To != p.From {
		st.record(n, seq, at, p.To, "", privateText(p.From, p.Text))
		if target.open() == 0 && len(st.mail[p.To]) < st.opts.MaxMailbox {
			// Within the leave grace: a resume replays the event, a fresh
			// login gets it from the mailbox.
			st.mail[p.To] = append(st.mail[p.To], clusterMail{id: seq, m: store.Mail{From: p.From, Text: p.Text, Time: m.Time}, time: at})
		}
	}
	st.record(n, seq, at, p.From, "", echoText(p.To, p.Text))
	return result{}
}

// open adds a stream of m.Nick on m.Node. On the node that opened it, the
// stream gets what it missed (the history after its resume id, or its
// mailbox), the welcome lines (under the open's id) and, from then on,
// every event.
func (st *clusterState) open(n *natsNode, seq uint64, at time.Time, m *natsMsg, w *natsWaiter) result {
	if st.gone[m.Node] {
		return result{err: refuse(ErrUnavailable, "chat: this node was declared gone by the cluster and rejoins as a new one: log in again")}
	}
	nick := m.Nick
	st.box(nick, at)
	if m.Has && m.Resume < seq {
		// The resume id confirms the mail up to it (an id above the last
		// one issued confirms nothing: it was not seen here).
		st.dropMail(nick, func(id uint64) bool { return id <= m.Resume })
	}
	u := st.users[nick]
	wasOnline := u != nil
	var res result
	switch {
	case w != nil && w.conn != nil:
		res.joined = st.welcome(nick, seq, m, u)
		if n.local[nick] == nil {
			n.local[nick] = map[*conn]uint64{}
		}
		n.local[nick][w.conn] = m.Token
	case m.Node == n.id:
		// Opened here, but its login gave up waiting: close it again.
		n.later(0, natsMsg{Kind: "close", Node: m.Node, Nick: nick, Resume: m.Token}, fmt.Sprintf("close-%s-%d", m.Node, m.Token), nil)
	}
	if u == nil {
		u = &clusterUser{streams: map[string]map[uint64]struct{}{}}
		st.users[nick] = u
	}
	if u.streams[m.Node] == nil {
		u.streams[m.Node] = map[uint64]struct{}{}
	}
	u.streams[m.Node][m.Token] = struct{}{}
	u.zeroSince = 0
	if !wasOnline {
		st.record(n, seq, at, "", nick, joinedText(nick))
	}
	return res
}

// welcome is what a new stream writes before its live events.
func (st *clusterState) welcome(nick string, seq uint64, m *natsMsg, u *clusterUser) joined {
	j := joined{resume: m.Resume, hasResume: m.Has, mailFrom: seq, mailTo: seq}
	if m.Has && m.Resume >= seq {
		j.resume, j.hasResume = 0, false
		j.notice = fmt.Sprintf("resume id %d is above the last event id issued here (%d): nothing was missed; the ids of this stream start again below it", m.Resume, seq-1)
	}
	if j.hasResume {
		j.replayTo = j.resume // the replay is in the preamble
		if j.resume < st.pruned {
			j.notice = fmt.Sprintf("events %d to %d are older than the retention window (%v) and were deleted: those addressed to you are missing from this resume", j.resume+1, st.pruned, st.opts.Retention)
		}
		i := sort.Search(len(st.history), func(i int) bool { return st.history[i].id > j.resume })
		for _, e := range st.history[i:] {
			if e.to == nick || e.to == "" && e.except != nick {
				j.preamble = append(j.preamble, newEvent(e.id, e.text))
			}
		}
	} else {
		for _, cm := range st.mail[nick] {
			j.preamble = append(j.preamble, newEvent(cm.id, offlineText(&cm.m)))
		}
	}
	j.mailPending = len(st.mail[nick]) > 0

	total := len(st.users)
	if u != nil && u.open() == 0 {
		total--
	}
	online := make([]string, 0, min(total, maxOnlineShown))
	for other, ou := range st.users {
		if len(online) == maxOnlineShown {
			break
		}
		if other != nick || ou.open() > 0 {
			online = append(online, other)
		}
	}
	slices.Sort(online)
	j.preamble = append(j.preamble, newEvent(seq, welcomeText(nick)), newEvent(seq, onlineText(online, total)))
	return j
}

// closeStream removes a stream; the user's last one starts the leave grace.
func (st *clusterState) closeStream(n *natsNode, seq uint64, at time.Time, nick, node string, token uint64) {
	u := st.users[nick]
	if u == nil {
		return
	}
	if _, ok := u.streams[node][token]; !ok {
		return
	}
	delete(u.streams[node], token)
	if len(u.streams[node]) == 0 {
		delete(u.streams, node)
	}
	if u.open() == 0 {
		st.startGrace(n, seq, at, nick, node, u)
	}
}

// startGrace: nick has no stream left since seq. After the grace, the node
// that closed the last stream (origin; "" when that node is gone: every
// node) asks for its leave; the others ask one node TTL later, in case it
// could not. The first request stored is applied, the others find it done
// (or are deduplicated).
func (st *clusterState) startGrace(n *natsNode, seq uint64, at time.Time, nick, origin string, u *clusterUser) {
	u.zeroSince = seq
	grace := max(st.opts.LeaveGrace, 0) - time.Since(at)
	if origin != "" && origin != n.id {
		grace += n.ttl
	}
	n.later(grace, natsMsg{Kind: "grace", Nick: nick, Resume: seq}, fmt.Sprintf("grace-%s-%d", nick, seq), func() bool {
		u := st.users[nick]
		return u != nil && u.zeroSince == seq && u.open() == 0
	})
}

func (st *clusterState) leaveNow(n *natsNode, seq uint64, at time.Time, nick string) {
	delete(st.users, nick)
	st.record(n, seq, at, "", nick, leftText(nick))
}

// nodeGone closes every stream of node; when it is this node, its streams
// are cut and it goes on as a new incarnation.
func (st *clusterState) nodeGone(n *natsNode, seq uint64, at time.Time, node string) {
	if st.gone[node] {
		return
	}
	st.gone[node] = true
	for nick, u := range st.users {
		if _, ok := u.streams[node]; !ok {
			continue
		}
		delete(u.streams, node)
		if u.open() == 0 {
			st.startGrace(n, seq, at, nick, "", u)
		}
	}
	if node == n.id {
		n.lostPlace()
	}
}

// dump is the state as text, the same on every node that applied the same
// messages (for tests): the nodes' incarnations are left out.
func (st *clusterState) dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "applied %d pruned %d\n", st.applied, st.pruned)
	for _, nick := range slices.Sorted(maps.Keys(st.users)) {
		u := st.users[nick]
		fmt.Fprintf(&b, "user %s open %d zeroSince %d\n", nick, u.open(), u.zeroSince)
	}
	for _, nick := range slices.Sorted(maps.Keys(st.mail)) {
		for _, cm := range st.mail[nick] {
			fmt.Fprintf(&b, "mail %s %d %s %q\n", nick, cm.id, cm.m.From, cm.m.Text)
		}
	}
	for _, e := range st.history {
		fmt.Fprintf(&b, "event %d to %q except %q %q\n", e.id, e.to, e.except, e.text)
	}
	return b.String()
}
