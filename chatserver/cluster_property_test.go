package chatserver

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/cluster"
)

// twin is one logical stream, open on the single node and on a cluster node.
type twin struct {
	nick      string
	node      int
	one, many *client
	seen      [2][]ev // what each has received so far
	closed    bool
}

// drain moves what c received into *seen.
func drain(c *client, seen *[]ev) {
	for {
		select {
		case e := <-c.events:
			*seen = append(*seen, e)
		default:
			return
		}
	}
}

func texts(evs []ev) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.text
	}
	return out
}

// TestNATSClusterMatchesOneNode feeds the same random sequences of logins,
// leaves, posts, graces over, presence flushes, mailbox acks and node losses
// to a single node and to a cluster of three NATS servers with two chat
// nodes, and checks after every step that every user's stream received the
// same events with the same text in the same order on both, and that the
// mailboxes hold the same mail (on both cluster nodes). Timers are out of
// the way (a grace and a presence window of an hour, no automatic acks):
// the graces, flushes and acks happen when the sequence says.
func TestNATSClusterMatchesOneNode(t *testing.T) {
	t.Parallel()
	seeds := []uint64{2026, 20, 21}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { clusterMatchesOneNode(t, seed, 100) })
	}
}

func clusterMatchesOneNode(t *testing.T, seed uint64, steps int) {
	opts := Options{LeaveGrace: time.Hour, PresenceWindow: time.Hour, MailAckDelay: time.Hour, MaxMailbox: 3, MaxMailboxes: 20}
	single := startServer(t, opts)
	nc := startNATSCluster(t, 3)
	nodes := []*testServer{startNATSNode(t, nc, opts), startNATSNode(t, nc, opts)}
	rng := rand.New(rand.NewPCG(seed, 2026))
	users := []string{"ann", "bob", "cat", "dan"}
	everyone := append(slices.Clone(users), "eve", "fay") // eve and fay never log in
	addrs := []string{"192.0.2.1", "192.0.2.2", "198.51.100.7"}
	var twins []*twin
	var log []string // the steps so far, for a failure's message
	kinds := map[string]int{}

	open := func() []*twin {
		var out []*twin
		for _, tw := range twins {
			if !tw.closed {
				out = append(out, tw)
			}
		}
		return out
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("after the steps\n  %s\n%s", strings.Join(log, "\n  "), fmt.Sprintf(format, args...))
	}
	clusterDo := func(node int, m cluster.Record) {
		t.Helper()
		if _, err := nodes[node].srv.nats().publish(t.Context(), &m, "", &natsWaiter{}); err != nil {
			fail("publish %s: %v", m.Kind, err)
		}
	}
	mailOne := func(nick string) []string {
		var out []string
		single.srv.localHub().do(t.Context(), &inspectReq{fn: func(h *hub) {
			for _, m := range h.m.Mailbox(nick) {
				out = append(out, m.From+" "+m.Addr+" "+m.Text)
			}
		}})
		return out
	}
	mailMany := func(node int, nick string) (out []string) {
		n := nodes[node].srv.nats()
		n.mu.Lock()
		defer n.mu.Unlock()
		for _, m := range n.st.m.Mailbox(nick) {
			out = append(out, m.From+" "+m.Addr+" "+m.Text)
		}
		return out
	}
	streamsOne := func(nick string) (n int) {
		return single.streams(nick)
	}
	streamsMany := func(node int, nick string) int {
		n := nodes[node].srv.nats()
		n.mu.Lock()
		defer n.mu.Unlock()
		on, open := n.st.m.Online(nick)
		if !on {
			return -1
		}
		return open
	}
	// settle waits until both sides told every stream the same (and nothing
	// more arrived for quiet), and the cluster's nodes applied the same
	// messages, then compares mailboxes and who is online. (Before a stream
	// closes it waits longer, so that what is on its way is not cut off.)
	settle := func(quiet time.Duration) {
		t.Helper()
		deadline := time.Now().Add(natsTestTime)
		var stableSince time.Time
		lastTotal := -1
		for {
			behind := false
			total := 0
			for _, tw := range twins {
				if tw.closed {
					continue
				}
				drain(tw.one, &tw.seen[0])
				drain(tw.many, &tw.seen[1])
				a, b := texts(tw.seen[0]), texts(tw.seen[1])
				n := min(len(a), len(b))
				if !slices.Equal(a[:n], b[:n]) {
					fail("%s's stream (node %d) differs:\none node: %q\ncluster:  %q", tw.nick, tw.node, a, b)
				}
				if len(a) != len(b) {
					behind = true
				}
				total += len(a)
			}
			if total != lastTotal {
				lastTotal, stableSince = total, time.Now()
			}
			if time.Since(stableSince) < quiet {
				behind = true
			}
			n0, n1 := nodes[0].srv.nats(), nodes[1].srv.nats()
			n0.mu.Lock()
			s0 := n0.st.applied
			n0.mu.Unlock()
			n1.mu.Lock()
			s1 := n1.st.applied
			n1.mu.Unlock()
			if s0 != s1 {
				behind = true
			}
			if !behind {
				break
			}
			if time.Now().After(deadline) {
				for _, tw := range open() {
					t.Logf("%s (node %d): one node %q, cluster %q", tw.nick, tw.node, texts(tw.seen[0]), texts(tw.seen[1]))
				}
				fail("the two sides did not agree within %v (cluster nodes at %d and %d)", natsTestTime, s0, s1)
			}
			time.Sleep(5 * time.Millisecond)
		}
		for _, nick := range everyone {
			one, a, b := mailOne(nick), mailMany(0, nick), mailMany(1, nick)
			if !slices.Equal(one, a) || !slices.Equal(one, b) {
				fail("%s's mailbox: one node %q, cluster nodes %q and %q", nick, one, a, b)
			}
			s, c0, c1 := streamsOne(nick), streamsMany(0, nick), streamsMany(1, nick)
			if s != c0 || s != c1 {
				fail("%s's streams: one node %d, cluster nodes %d and %d", nick, s, c0, c1)
			}
		}
	}
	// closed waits until the sides count want streams of nick.
	closed := func(nick string, want int) {
		t.Helper()
		deadline := time.Now().Add(natsTestTime)
		for streamsOne(nick) != want || streamsMany(0, nick) != want || streamsMany(1, nick) != want {
			if time.Now().After(deadline) {
				fail("%s's streams: one node %d, cluster %d and %d, want %d", nick, streamsOne(nick), streamsMany(0, nick), streamsMany(1, nick), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	countOpen := func(nick string) int {
		n := 0
		for _, tw := range open() {
			if tw.nick == nick {
				n++
			}
		}
		return n
	}

	for step := range steps {
		switch op := rng.IntN(100); {
		case op < 25: // a login
			nick, node := users[rng.IntN(len(users))], rng.IntN(2)
			log = append(log, fmt.Sprintf("%d: %s logs in on node %d", step, nick, node))
			kinds["login"]++
			tw := &twin{nick: nick, node: node, one: single.login(t, "sse", nick), many: nodes[node].login(t, "sse", nick)}
			twins = append(twins, tw)
			// Its welcome comes at once, on both.
			for side, c := range []*client{tw.one, tw.many} {
				for !slices.ContainsFunc(tw.seen[side], func(e ev) bool { return strings.HasPrefix(e.text, "now online: ") }) {
					select {
					case e := <-c.events:
						tw.seen[side] = append(tw.seen[side], e)
					case <-time.After(natsTestTime):
						fail("%s's login (side %d): no welcome within %v; got %q", nick, side, natsTestTime, texts(tw.seen[side]))
					}
				}
			}
		case op < 40: // a leave
			o := open()
			if len(o) == 0 {
				continue
			}
			tw := o[rng.IntN(len(o))]
			log = append(log, fmt.Sprintf("%d: %s's stream on node %d closes", step, tw.nick, tw.node))
			kinds["leave"]++
			settle(100 * time.Millisecond)
			tw.closed = true
			tw.one.close()
			tw.many.close()
			closed(tw.nick, countOpen(tw.nick))
		case op < 80: // a post
			to := "all"
			if rng.IntN(4) > 0 {
				to = everyone[rng.IntN(len(everyone))]
			}
			p := message{From: everyone[rng.IntN(len(everyone))], To: to, Text: fmt.Sprint("m", step), Time: time.Now(), Addr: addrs[rng.IntN(len(addrs))]}
			node := rng.IntN(2)
			log = append(log, fmt.Sprintf("%d: %s sends %q to %s from %s on node %d", step, p.From, p.Text, p.To, p.Addr, node))
			r1 := postNow(t.Context(), single.srv, p)
			r2 := postNow(t.Context(), nodes[node].srv, p)
			kinds[fmt.Sprintf("post (offline %v, refused %v)", r1.offline, r1.err != nil)]++
			if fmt.Sprint(r1.err) != fmt.Sprint(r2.err) || r1.offline != r2.offline {
				fail("the post's outcome: one node %+v, cluster %+v", r1, r2)
			}
		case op < 87: // a grace over
			var nick string
			var gen1 uint64
			single.srv.localHub().do(t.Context(), &inspectReq{fn: func(h *hub) {
				for _, n := range users {
					if g, ok := h.m.GraceOf(n); ok {
						nick, gen1 = n, g
						return
					}
				}
			}})
			if nick == "" {
				continue
			}
			n := nodes[0].srv.nats()
			n.mu.Lock()
			gen2, ok := n.st.m.GraceOf(nick)
			n.mu.Unlock()
			if !ok {
				fail("%s is in its leave grace on one node, not on the cluster", nick)
			}
			log = append(log, fmt.Sprintf("%d: %s's grace is over", step, nick))
			kinds["grace over"]++
			single.srv.localHub().do(t.Context(), &graceReq{nick: nick, gen: gen1})
			clusterDo(rng.IntN(2), cluster.Record{Kind: "grace", Nick: nick, Resume: gen2})
		case op < 92: // the presence window is over
			log = append(log, fmt.Sprintf("%d: the presence window is over", step))
			kinds["flush"]++
			single.srv.localHub().do(t.Context(), &presenceReq{})
			clusterDo(rng.IntN(2), cluster.Record{Kind: "flush"})
		case op < 97: // a stream acknowledges what it wrote
			o := open()
			if len(o) == 0 {
				continue
			}
			tw := o[rng.IntN(len(o))]
			settle(100 * time.Millisecond)
			var acks [2][2]uint64
			for side, seen := range tw.seen {
				for _, e := range seen {
					if e.text == "Welcome "+tw.nick+"!" {
						acks[side][0] = e.id - 1
					}
				}
				if len(seen) > 0 {
					acks[side][1] = seen[len(seen)-1].id
				}
			}
			log = append(log, fmt.Sprintf("%d: %s's stream on node %d acknowledges what it wrote", step, tw.nick, tw.node))
			kinds["ack"]++
			single.srv.localHub().do(t.Context(), &ackReq{nick: tw.nick, from: acks[0][0], to: acks[0][1]})
			clusterDo(tw.node, cluster.Record{Kind: "ack", Nick: tw.nick, Resume: acks[1][0], Upto: acks[1][1]})
		default: // node 1 is lost with its streams
			log = append(log, fmt.Sprintf("%d: node 1 is declared gone", step))
			kinds["node gone"]++
			settle(100 * time.Millisecond)
			gone := nodes[1].srv.nats().nodeID()
			clusterDo(0, cluster.Record{Kind: "gone", Gone: gone})
			for _, tw := range open() {
				if tw.node != 1 {
					continue
				}
				tw.closed = true
				select {
				case <-tw.many.done:
				case <-time.After(natsTestTime):
					fail("%s's stream on the node declared gone was not cut", tw.nick)
				}
				tw.one.close()
			}
			for _, nick := range users {
				closed(nick, map[bool]int{true: countOpen(nick), false: -1}[streamsOne(nick) >= 0])
			}
			deadline := time.Now().Add(natsTestTime)
			for {
				if id := nodes[1].srv.nats().nodeID(); id != gone {
					if !nodes[1].srv.nats().log.Gone(t.Context(), id) {
						break // the new incarnation is said alive
					}
				}
				if time.Now().After(deadline) {
					fail("node 1 did not go on as a new node")
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		settle(0)
	}
	settle(100 * time.Millisecond)
	events := 0
	for _, tw := range twins {
		events += len(tw.seen[0])
	}
	t.Logf("%d steps %v: %d streams received %d events alike", steps, kinds, len(twins), events)
	for _, tw := range twins {
		if len(tw.seen[0]) == 0 || !strings.HasPrefix(tw.seen[0][0].text, "Welcome ") {
			t.Errorf("%s's stream on node %d: %q, want its welcome first", tw.nick, tw.node, texts(tw.seen[0]))
		}
	}
}

// dump is the state as text, the same on every node that applied the same
// messages (for tests): the nodes' incarnations are left out.
func (st *clusterState) dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "applied %d\n", st.applied)
	b.WriteString(st.m.Dump())
	st.history.Dump(&b)
	return b.String()
}
