package chatserver

import (
	"fmt"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/cluster"
	"github.com/wasmgap/wasmgap/chatserver/internal/room"
	"github.com/wasmgap/wasmgap/chatserver/internal/stream"
)

// clusterState is the chat's state as every node derives it from the
// log: the rules' machine (internal/room, the same one a single node
// runs) and the history a resume replays. Every node applies the same
// messages in the same order, each with its log sequence and
// timestamp, so every node holds the same state and derives the same
// events with the same ids (room.Config.IDsPerRequest numbers them by
// their message). Only the deliveries differ: each node hands an event to
// the streams connected to it.
type clusterState struct {
	opts    *Options
	m       *room.Machine
	perReq  uint64 // event ids per record of the log
	history cluster.History
	started bool   // a message was applied
	applied uint64 // the last sequence applied
}

func newClusterState(o *Options) *clusterState {
	per := uint64(o.MaxMailbox) + 8 // the most events one message makes, and some
	return &clusterState{opts: o, m: room.New(roomConfig(o, per), 0), perReq: per}
}

// apply changes the state by m, stored at seq at time at, and delivers the
// events it makes to n's streams. w is the waiter when n published m.
func (st *clusterState) apply(n *natsNode, seq uint64, at time.Time, m *cluster.Record, w *natsWaiter) result {
	if !st.started {
		// The log's first records may have expired before this node
		// started: their events are not in its history.
		st.started = true
		st.history.Started(seq * st.perReq)
	}
	st.applied = seq
	st.history.Expire(at.Add(-st.opts.Retention))
	req, err := m.Request(seq, at)
	if err != nil {
		return result{err: err}
	}
	out := st.m.Apply(req)
	for _, id := range out.Deleted {
		st.history.Delete(id)
	}
	for _, e := range out.Events {
		st.history.Add(e, at)
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

// welcome is what a new stream writes before its live events: the events
// it missed and the mail offered come from the history here, in the
// preamble, around the welcome lines.
func (st *clusterState) welcome(nick string, rj *room.Joined) stream.Plan {
	j := stream.PlanOf(rj)
	pre := j.Preamble
	j.Preamble = nil
	if j.HasResume {
		// A resume from before the history's start is told so by the
		// stream's writer (natsNode.pruned), as on one node.
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
	st.history.Visible(nick, after, upTo, func(e room.Event) { out = append(out, stream.NewEvent(e.ID, e.Text)) })
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
