package chatserver

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/auth"
	"github.com/wasmgap/wasmgap/chatserver/internal/cluster"
	"github.com/wasmgap/wasmgap/chatserver/internal/store"
	"github.com/wasmgap/wasmgap/chatserver/internal/stream"
)

// Several nodes, one chat: with Options.NATS the chat's state is a
// replicated state machine over one log, a JetStream stream (natsstate.go
// holds the state and how each record changes it; internal/cluster the
// connection, the log, the node keys and the records). In this package a
// "stream" is always a user's open SSE or WebSocket stream. This file
// appends each change and waits until this node applied it, and hands
// the events to this node's streams.

// NATSOptions joins a chat served by several nodes through NATS JetStream.
// The zero value (no URLs) keeps the single-node chat.
type NATSOptions struct {
	// URLs of the NATS servers, comma-separated ("nats://a:4222,nats://b:4222").
	// Empty: single node, the in-process broker and the local store.
	URLs string
	// Replicas of the chat's log and bucket. Default: 3, or the number of
	// servers the client knows if fewer (1 for a single server).
	Replicas int
	// NodeTTL is how long a node that stopped saying it is alive keeps its
	// users' streams: past it another node declares it gone, and its users
	// leave after LeaveGrace. Each node renews its key every NodeTTL/5.
	// Default 10s.
	NodeTTL time.Duration
}

// natsWait bounds an append and the wait until it is applied here.
const natsWait = 10 * time.Second

// ErrUnavailable: the chat cannot take the request now (not connected to
// NATS, the cluster has no leader); retry in a moment (503).
var ErrUnavailable = errors.New("chat unavailable")

// natsNode is this server's part in a chat over NATS.
type natsNode struct {
	opts   *Options
	log    *cluster.Log
	ttl    time.Duration
	tokens atomic.Uint64
	quit   chan struct{}
	stop   sync.Once // closes quit
	wg     sync.WaitGroup

	mu      sync.Mutex
	id      string // this incarnation: a new one once declared gone
	waiters map[uint64]*natsWaiter
	st      *clusterState
	local   map[string]map[*stream.Conn]uint64 // nick → this node's streams → their open token
	closing bool
}

// natsWaiter is a caller waiting for its message to be applied here.
type natsWaiter struct {
	ch   chan result
	conn *stream.Conn // an open: the stream to register
}

// joinNATS makes this process a node of a chat whose state lives in JetStream.
func joinNATS(opts *Options) (*natsNode, error) {
	if err := cluster.CheckURLs(opts.NATS.URLs); err != nil {
		return nil, err
	}
	if opts.NATS.NodeTTL == 0 {
		opts.NATS.NodeTTL = 10 * time.Second
	}
	if opts.NATS.NodeTTL < time.Second || opts.NATS.Replicas < 0 || opts.NATS.Replicas > 5 {
		return nil, errors.New("chat NATS options: NodeTTL must be 0 (default 10s) or at least 1s, Replicas 0 (default) to 5")
	}
	n := &natsNode{opts: opts, ttl: opts.NATS.NodeTTL, quit: make(chan struct{}),
		id: cluster.NewNodeID(), waiters: map[uint64]*natsWaiter{}, local: map[string]map[*stream.Conn]uint64{},
		st: newClusterState(opts)}
	log, err := cluster.Open(cluster.Config{URLs: opts.NATS.URLs, Replicas: opts.NATS.Replicas,
		Retention: opts.Retention, MaxBytes: opts.MaxStoreBytes, NodeTTL: n.ttl, Node: n.id, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	n.log = log
	if err := log.Read(n.handle); err != nil {
		log.Close()
		return nil, err
	}
	n.wg.Go(n.liveness)
	return n, nil
}

func (n *natsNode) nodeID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.id
}

// notConnected is the refusal while this node has no NATS connection.
func (n *natsNode) notConnected() error {
	return refuse(ErrUnavailable, "chat: not connected to NATS (%s): sends are refused until it reconnects", n.log.URLs())
}

// publish publishes m and, with a waiter, waits until this node applied
// it and returns what applying it did. msgID deduplicates (default: node
// and token).
func (n *natsNode) publish(ctx context.Context, m *cluster.Record, msgID string, w *natsWaiter) (result, error) {
	wait, err := n.send(ctx, m, msgID, w, false)
	if err != nil {
		return result{}, err
	}
	return wait()
}

// send publishes m: at once and waiting for its ack, or (async) leaving the
// ack to wait, so that one client's messages follow one another without a
// round trip each. Async publishes are never retried by the client, so the
// messages one goroutine sends are stored in the order it sent them.
func (n *natsNode) send(ctx context.Context, m *cluster.Record, msgID string, w *natsWaiter, async bool) (wait func() (result, error), err error) {
	if !n.log.Connected() {
		return nil, n.notConnected()
	}
	n.mu.Lock()
	if n.closing {
		n.mu.Unlock()
		return nil, ErrShuttingDown
	}
	if m.Node == "" {
		m.Node = n.id
	}
	if m.Token == 0 {
		m.Token = n.tokens.Add(1)
	}
	if w != nil {
		w.ch = make(chan result, 1)
		n.waiters[m.Token] = w
	}
	n.mu.Unlock()
	unwait := func() {
		if w != nil {
			n.mu.Lock()
			delete(n.waiters, m.Token)
			n.mu.Unlock()
		}
	}
	if msgID == "" {
		msgID = m.Node + "-" + strconv.FormatUint(m.Token, 10)
	}
	pctx, cancel := context.WithTimeout(ctx, natsWait)
	acked, err := n.log.Append(pctx, m, msgID, async)
	if err != nil {
		cancel()
		unwait()
		if err := n.notStored(err, w); err != nil {
			return nil, err
		}
		return func() (result, error) { return result{}, nil }, nil
	}
	return func() (result, error) {
		defer cancel()
		if err := acked(); errors.Is(err, cluster.ErrNoAck) {
			unwait()
			return result{}, refuse(ErrUnavailable, "chat: NATS did not acknowledge the message within %v: it may or may not be stored; retry in a moment", natsWait)
		} else if err != nil {
			unwait()
			return result{}, n.notStored(err, w)
		}
		if w == nil {
			return result{}, nil
		}
		select {
		case r := <-w.ch:
			return r, r.err
		case <-pctx.Done():
			unwait()
			return result{}, refuse(ErrUnavailable, "chat: the message is in NATS but this node did not apply it within %v (%v); it will be delivered, do not resend", natsWait, pctx.Err())
		case <-n.quit:
			unwait()
			return result{}, ErrShuttingDown
		}
	}, nil
}

// notStored is the refusal for a message NATS did not store (nil: another
// node is storing the same message, for a message nobody waits for).
func (n *natsNode) notStored(err error, w *natsWaiter) error {
	if !n.log.Connected() {
		return n.notConnected()
	}
	if cluster.Duplicate(err) && w == nil {
		// A grace or a node gone that another node is storing: stored once.
		return nil
	}
	if cluster.Full(err) {
		return refuse(ErrStoreFull, "chat store full: stream %s holds its most (max bytes %d); old history leaves after the retention (%v), retry later", cluster.Stream, n.opts.MaxStoreBytes, n.opts.Retention)
	}
	return refuse(ErrUnavailable, "chat: NATS did not store the message (%v): retry in a moment", err)
}

// handle applies one record of the log, in order.
func (n *natsNode) handle(seq uint64, at time.Time, data []byte) {
	m, err := cluster.Decode(data)
	if err != nil {
		n.opts.Logger.Error("chat NATS: undecodable message, skipped", "seq", seq, "err", err)
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var w *natsWaiter
	if m.Node == n.id && m.Token != 0 {
		w = n.waiters[m.Token]
		delete(n.waiters, m.Token)
	}
	res := n.st.apply(n, seq, at, m, w)
	if w != nil {
		w.ch <- res
	}
}

// deliver hands ev to this node's streams of nick.
func (n *natsNode) deliverTo(nick string, ev *stream.Event) {
	for c := range n.local[nick] {
		c.Push(ev)
	}
}

// deliverAll hands ev to this node's streams of every user but except.
func (n *natsNode) deliverAll(except string, ev *stream.Event) {
	for nick, cs := range n.local {
		if nick == except {
			continue
		}
		for c := range cs {
			c.Push(ev)
		}
	}
}

// lostPlace is called (under mu) when this node was declared gone: its
// streams are closed (their clients resume, here or elsewhere) and it goes
// on as a new incarnation.
func (n *natsNode) lostPlace() {
	for _, cs := range n.local {
		for c := range cs {
			c.Cut("this chat node lost its NATS connection for longer than the node TTL; reconnect with the last event id received to resume")
		}
	}
	clear(n.local)
	n.id = cluster.NewNodeID()
	// Said alive at once: another node that saw a stream of the new
	// incarnation before its key would declare it gone too.
	id := n.id
	n.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), natsWait)
		defer cancel()
		if err := n.log.Alive(ctx, id); err != nil {
			n.opts.Logger.Warn("chat NATS: announce this node's new incarnation", "node", id, "err", err)
		}
	})
}

// later publishes m after d, unless the node stops first or still (called
// under mu, nil: always) says it is no longer needed; msgID makes the
// copies several nodes publish one.
func (n *natsNode) later(d time.Duration, m cluster.Record, msgID string, still func() bool) {
	time.AfterFunc(max(d, 0), func() {
		select {
		case <-n.quit:
			return
		default:
		}
		if still != nil {
			n.mu.Lock()
			needed := still()
			n.mu.Unlock()
			if !needed {
				return
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), natsWait)
		defer cancel()
		if _, err := n.publish(ctx, &m, msgID, nil); err != nil && !errors.Is(err, ErrShuttingDown) {
			n.opts.Logger.Warn("chat NATS: publish", "kind", m.Kind, "err", err)
			n.later(time.Second, m, msgID, still) // every node retries; the first stored wins
		}
	})
}

// liveness renews this node's key and declares gone the nodes whose key expired.
func (n *natsNode) liveness() {
	every := max(n.ttl/5, 200*time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-n.quit:
			return
		case <-tick.C:
		}
		if !n.log.Connected() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), every*2)
		id := n.nodeID()
		if err := n.log.Alive(ctx, id); err != nil {
			n.opts.Logger.Warn("chat NATS: renew node key", "node", id, "err", err)
		}
		n.mu.Lock()
		nodes := n.st.m.NodesWithStreams()
		n.mu.Unlock()
		for _, node := range nodes {
			if node == id {
				continue
			}
			if n.log.Gone(ctx, node) {
				n.opts.Logger.Info("chat NATS: node gone", "node", node)
				n.publish(ctx, &cluster.Record{Kind: "gone", Gone: node}, "gone-"+node, nil)
			}
		}
		cancel()
	}
}

// join opens a stream of nick on this node.
func (n *natsNode) join(ctx context.Context, nick string, resume uint64, hasResume bool) (*stream.Conn, result, func()) {
	c := stream.NewConn(nick, n.opts.QueueSize)
	res, err := n.publish(ctx, &cluster.Record{Kind: "open", Nick: nick, Resume: resume, Has: hasResume}, "", &natsWaiter{conn: c})
	if err != nil {
		res.err = err
	}
	return c, res, func() { n.leave(c) }
}

// leave closes a stream of this node: it stops getting events at once, and
// its close is published (a stopping node publishes none: it is declared gone).
func (n *natsNode) leave(c *stream.Conn) {
	n.mu.Lock()
	token, ok := n.local[c.Nick][c]
	if ok {
		delete(n.local[c.Nick], c)
		if len(n.local[c.Nick]) == 0 {
			delete(n.local, c.Nick)
		}
	}
	node, closing := n.id, n.closing
	n.mu.Unlock()
	c.Cut(stream.Closed)
	if !ok || closing {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), natsWait)
	defer cancel()
	m := cluster.Record{Kind: "close", Node: node, Nick: c.Nick, Resume: token}
	if _, err := n.publish(ctx, &m, "close-"+node+"-"+strconv.FormatUint(token, 10), nil); err != nil && !errors.Is(err, ErrShuttingDown) {
		// Not connected: the close is published once NATS is back, or the
		// node is declared gone first.
		n.opts.Logger.Warn("chat NATS: publish a stream's close", "nick", c.Nick, "err", err)
		n.later(time.Second, m, "close-"+node+"-"+strconv.FormatUint(token, 10), nil)
	}
}

// ack publishes that nick's events with from < id <= to were delivered,
// on a goroutine of its own.
func (n *natsNode) ack(nick string, from, to uint64) { go n.publishAck(nick, from, to) }

func (n *natsNode) publishAck(nick string, from, to uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), natsWait)
	defer cancel()
	if _, err := n.publish(ctx, &cluster.Record{Kind: "ack", Nick: nick, Resume: from, Upto: to}, "", nil); err != nil {
		n.opts.Logger.Warn("chat NATS: publish a mailbox ack", "nick", nick, "err", err)
	}
}

// shutdown cuts this node's streams and leaves the cluster: its key is
// deleted, so the other nodes declare it gone (its users leave after the
// grace unless they reconnected elsewhere).
func (n *natsNode) shutdown() {
	n.mu.Lock()
	n.closing = true
	for _, cs := range n.local {
		for c := range cs {
			c.Cut(stream.ShuttingDown)
		}
	}
	clear(n.local)
	id := n.id
	n.mu.Unlock()
	n.stop.Do(func() { close(n.quit) })
	n.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n.log.Leave(ctx, id)
}

// claims is the nick claims of this node's chat, kept in NATS.
func (n *natsNode) claims() auth.Claims {
	return auth.NewKVClaims(auth.KVConfig{JS: n.log.JetStream(), Stream: cluster.Stream, Node: n.nodeID, Quit: n.quit,
		Logger: n.opts.Logger, Grace: claimHold(n.opts.Retention, n.opts.LeaveGrace), Wait: natsWait, Unavailable: ErrUnavailable})
}

// post publishes m to the chat's log and hands then what applying it here
// did: waiting for the acknowledgement, or (pipelined) leaving the wait to
// the goroutine that calls then, so that one client's messages follow one
// another without a round trip each.
func (n *natsNode) post(ctx context.Context, m message, pipelined bool, then func(result)) error {
	rec := &cluster.Record{Kind: "post", Nick: m.From, To: m.To, Text: m.Text, Time: m.Time.UnixNano(), Addr: m.Addr}
	answer := func(res result, err error) {
		if err != nil {
			res.err = err
		}
		then(res)
	}
	if !pipelined {
		go func() { answer(n.publish(ctx, rec, "", &natsWaiter{})) }()
		return nil
	}
	wait, err := n.send(ctx, rec, "", &natsWaiter{}, true)
	if err != nil {
		return err
	}
	go func() { answer(wait()) }()
	return nil
}

// readLog reads nothing: a NATS node's history is in memory, and a new
// stream's welcome carries what it missed (clusterState.welcome).
func (n *natsNode) readLog(_ string, _, upTo uint64, _ int) ([]*store.Record, uint64, error) {
	return nil, upTo, nil
}

// pruned is the last event id that left this node's history.
func (n *natsNode) pruned() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.st.history.Pruned()
}

// cutAll tells this node's streams to resume (here once it is back, or on
// another node).
func (n *natsNode) cutAll(reason string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, cs := range n.local {
		for c := range cs {
			c.Cut(reason)
		}
	}
}

// close leaves the cluster (shutdown).
func (n *natsNode) close() error {
	n.shutdown()
	return nil
}
