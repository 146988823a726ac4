package chatserver

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/cluster"
	"github.com/wasmgap/wasmgap/chatserver/internal/room"
	"github.com/wasmgap/wasmgap/chatserver/internal/stream"
)

// clusterState is the chat's state as every node derives it from the
// stream: the rules' machine (internal/room, the same one a single node
// runs) and the history a resume replays. Every node applies the same
// messages in the same order, each with its stream sequence and
// timestamp, so every node holds the same state and derives the same
// events with the same ids (room.Config.IDsPerRequest numbers them by
// their message). Only the deliveries differ: each node hands an event to
// the streams connected to it.
type clusterState struct {
	opts    *Options
	m       *room.Machine
	perReq  uint64         // event ids per stream message
	history []clusterEvent // by id, within the retention
	pruned  uint64         // the last id whose events may be missing from history
	started bool           // a message was applied
	applied uint64         // the last sequence applied
}

// clusterEvent is an event a resume can replay.
type clusterEvent struct {
	room.Event
	at time.Time
}

func newClusterState(o *Options) *clusterState {
	per := uint64(o.MaxMailbox) + 8 // the most events one message makes, and some
	return &clusterState{opts: o, m: room.New(roomConfig(o, per), 0), perReq: per}
}

// apply changes the state by m, stored at seq at time at, and delivers the
// events it makes to n's streams. w is the waiter when n published m.
func (st *clusterState) apply(n *natsNode, seq uint64, at time.Time, m *cluster.Record, w *natsWaiter) result {
	if !st.started {
		// The stream's first messages may have expired before this node
		// started: their events are not in its history.
		st.started, st.pruned = true, seq*st.perReq
	}
	st.applied = seq
	st.expire(at)
	req, err := m.Request(seq, at)
	if err != nil {
		return result{err: err}
	}
	out := st.m.Apply(req)
	for _, id := range out.Deleted {
		i := sort.Search(len(st.history), func(i int) bool { return st.history[i].ID >= id })
		if i < len(st.history) && st.history[i].ID == id {
			st.history = slices.Delete(st.history, i, i+1)
		}
	}
	for _, e := range out.Events {
		st.history = append(st.history, clusterEvent{Event: e, at: at})
		ev := stream.NewEvent(e.ID, e.Text)
		if e.To != "" {
			n.deliverTo(e.To, ev)
		} else {
			n.deliverAll(e.Except, ev)
		}
	}
	for _, g := range out.Graces {
		st.startGrace(n, at, g)
	}
	if !out.FlushAt.IsZero() {
		n.later(out.FlushAt.Sub(at)-time.Since(at), cluster.Record{Kind: "flush"}, fmt.Sprintf("flush-%d", seq), st.m.PresenceWaiting)
	}
	if m.Kind == "gone" && m.Gone == n.id {
		n.lostPlace() // this node: its streams are cut, it goes on as a new one
	}
	var res result
	if out.Refusal != nil {
		res.err = refusalOf(out.Refusal)
	}
	res.offline = out.Offline
	if m.Kind == "open" && out.Joined != nil {
		switch {
		case w != nil && w.conn != nil:
			// Registered after its open's events: its welcome has them.
			res.joined = st.welcome(m.Nick, out.Joined)
			if n.local[m.Nick] == nil {
				n.local[m.Nick] = map[*stream.Conn]uint64{}
			}
			n.local[m.Nick][w.conn] = m.Token
		case m.Node == n.id:
			// Opened here, but its login gave up waiting: close it again.
			n.later(0, cluster.Record{Kind: "close", Node: m.Node, Nick: m.Nick, Resume: m.Token}, fmt.Sprintf("close-%s-%d", m.Node, m.Token), nil)
		}
	}
	return res
}

// expire drops the history older than the retention, by the stream's clock.
func (st *clusterState) expire(at time.Time) {
	cut := at.Add(-st.opts.Retention)
	i := sort.Search(len(st.history), func(i int) bool { return !st.history[i].at.Before(cut) })
	if i > 0 {
		st.pruned = max(st.pruned, st.history[i-1].ID)
		st.history = slices.Delete(st.history, 0, i)
	}
}

// welcome is what a new stream writes before its live events: the events
// it missed and the mail offered come from the history here, in the
// preamble, around the welcome lines.
func (st *clusterState) welcome(nick string, rj *room.Joined) stream.Plan {
	j := joinedOf(rj)
	pre := j.Preamble
	j.Preamble = nil
	if j.HasResume {
		if j.Resume < st.pruned {
			j.Notice = fmt.Sprintf("events %d to %d are older than the retention window (%v) and were deleted: those addressed to you are missing from this resume", j.Resume+1, st.pruned, st.opts.Retention)
		}
		j.Preamble = st.visible(nick, j.Resume, j.ReplayTo, j.Preamble)
		j.ReplayTo = j.Resume // the replay is in the preamble
	}
	j.Preamble = append(j.Preamble, pre...)
	j.Preamble = st.visible(nick, j.MailFrom, j.MailTo, j.Preamble)
	j.MailFrom = j.MailTo
	return j
}

// visible appends the history's events for nick with after < id <= upTo.
func (st *clusterState) visible(nick string, after, upTo uint64, out []*stream.Event) []*stream.Event {
	i := sort.Search(len(st.history), func(i int) bool { return st.history[i].ID > after })
	for _, e := range st.history[i:] {
		if e.ID > upTo {
			break
		}
		if e.VisibleTo(nick) {
			out = append(out, stream.NewEvent(e.ID, e.Text))
		}
	}
	return out
}

// startGrace: g.Nick has no stream left. After the grace, the node that
// closed the last stream (g.Origin; "" when that node is gone: every node)
// asks for its leave; the others ask one node TTL later, in case it could
// not. The first request stored is applied, the others find it done (or
// are deduplicated).
func (st *clusterState) startGrace(n *natsNode, at time.Time, g room.Grace) {
	grace := max(st.opts.LeaveGrace, 0) - time.Since(at)
	if g.Origin != "" && g.Origin != n.id {
		grace += n.ttl
	}
	n.later(grace, cluster.Record{Kind: "grace", Nick: g.Nick, Resume: g.Gen}, fmt.Sprintf("grace-%s-%d", g.Nick, g.Gen), func() bool {
		return st.m.InGrace(g.Nick, g.Gen)
	})
}

// dump is the state as text, the same on every node that applied the same
// messages (for tests): the nodes' incarnations are left out.
func (st *clusterState) dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "applied %d pruned %d\n", st.applied, st.pruned)
	b.WriteString(st.m.Dump())
	for _, e := range st.history {
		fmt.Fprintf(&b, "event %d to %q except %q %q\n", e.ID, e.To, e.Except, e.Text)
	}
	return b.String()
}
