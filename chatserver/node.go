package chatserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/auth"
	"github.com/wasmgap/wasmgap/chatserver/internal/store"
	"github.com/wasmgap/wasmgap/chatserver/internal/stream"
)

// node is where a Server's chat lives: its state (the rules' machine of
// internal/room), its history and mailboxes, and the streams connected to
// this process. A Server holds exactly one, and every send (GET /msg/,
// POST /send, a WebSocket's frames, the fast path), login, confirmation
// and replay goes through it: a localNode (one process is the whole chat:
// the hub feeds the machine, the store keeps what it decided, the store's
// syncer answers once it is on disk; hub.go) or a natsNode (processes
// share one chat through a JetStream log; nats.go, natsstate.go).
type node interface {
	// post stores and delivers m, then calls then with the outcome: on the
	// store's syncer or the hub (local), or a goroutine of its own (NATS),
	// so then must neither block nor wait for the node. The posts one
	// goroutine hands on are stored in the order it handed them;
	// pipelined (a WebSocket's frames) lets a post go without waiting for
	// the previous one's acknowledgement. A non-nil error means m was not
	// taken and then is never called.
	post(ctx context.Context, m message, pipelined bool, then func(result)) error
	// join opens a stream of nick here; the caller calls leave when the
	// stream ends, whatever join returned.
	join(ctx context.Context, nick string, resume uint64, hasResume bool) (c *stream.Conn, res result, leave func())
	// ack says nick's events with from < id <= to were delivered: the
	// offline messages among them leave the mailbox. It does not wait.
	ack(nick string, from, to uint64)
	// readLog reads the stored events nick may see with after < id <= upTo,
	// at most limit, and the id to read on from (a NATS node's welcome
	// carries its history instead: it has none to read).
	readLog(nick string, after, upTo uint64, limit int) ([]*store.Record, uint64, error)
	// pruned is the last event id deleted with the history past the
	// retention: a resume from before it may miss events.
	pruned() uint64
	// claims is where nickname claims are kept (Options.ClaimNicks).
	claims() auth.Claims
	// cutAll closes every stream here with reason; logins are refused.
	cutAll(reason string)
	// close ends the node once the requests in flight finished.
	close() error
}

// message is one message a user sends: to one user or to "all". Addr is
// the sender's address, set by the routes (never a client's word): the
// offline mail waiting from one address is bounded.
type message struct {
	From, To, Text, Addr string
	Time                 time.Time
}

// localNode is the chat of one process: the hub over its store.
type localNode struct {
	hub    *hub
	store  *store.Store
	tmpDir string // a store folder of its own, removed by close
}

// openLocal opens the store under o.DataDir (a temporary folder when empty)
// and starts the hub on it.
func openLocal(o *Options) (*localNode, error) {
	n := &localNode{}
	dir := o.DataDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "wasmgap-chat-")
		if err != nil {
			return nil, fmt.Errorf("chat store: %w", err)
		}
		dir, n.tmpDir = tmp, tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("chat store folder: %w", err)
	}
	st, state, err := store.Open(filepath.Join(dir, "chat.db"), o.NoSync, o.Logger)
	if err != nil {
		n.removeTmp()
		return nil, err
	}
	n.store = st
	if n.hub, err = newHub(st, state, o); err != nil {
		st.Close()
		n.removeTmp()
		return nil, err
	}
	go n.hub.run()
	return n, nil
}

func (n *localNode) removeTmp() {
	if n.tmpDir != "" {
		os.RemoveAll(n.tmpDir)
	}
}

func (n *localNode) post(ctx context.Context, m message, _ bool, then func(result)) error {
	// The hub takes requests in order, and answers on its syncer: no
	// goroutine waits, pipelined or not.
	r := &postReq{msg: m}
	r.then = then
	return n.hub.submit(ctx, r)
}

func (n *localNode) join(ctx context.Context, nick string, resume uint64, hasResume bool) (*stream.Conn, result, func()) {
	c := stream.NewConn(nick, n.hub.queueSize)
	res := n.hub.do(ctx, &joinReq{conn: c, resume: resume, hasResume: hasResume})
	return c, res, func() { n.hub.do(context.Background(), &leaveReq{conn: c}) }
}

func (n *localNode) ack(nick string, from, to uint64) {
	n.hub.submit(context.Background(), &ackReq{nick: nick, from: from, to: to})
}

func (n *localNode) readLog(nick string, after, upTo uint64, limit int) ([]*store.Record, uint64, error) {
	return n.store.ReadLog(nick, after, upTo, limit)
}

func (n *localNode) pruned() uint64 { return n.hub.pruned.Load() }

func (n *localNode) claims() auth.Claims { return n.hub.claims }

// claimHold is how long a nickname's claim outlasts its last stream and
// its last offline message: as long as its history and mail are kept
// (the retention, and the leave grace in which it is still online).
func claimHold(retention, grace time.Duration) time.Duration {
	return retention + max(grace, 0)
}

func (n *localNode) cutAll(reason string) {
	n.hub.closing.Store(true)
	// The hub is still running: this request is answered at once.
	n.hub.do(context.Background(), &cutAllReq{reason: reason})
}

func (n *localNode) close() error {
	n.hub.stop()
	err := n.store.Close()
	n.removeTmp()
	if err != nil {
		return fmt.Errorf("close chat store: %w", err)
	}
	return nil
}
