package chatserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/wasmgap/wasmgap/chatserver/internal/cluster"
)

// natsTestTime bounds each test of a chat over NATS. Those tests run side by side
// (t.Parallel): they wait on NATS (a cluster's leader, a reconnect, a key's expiry) more
// than they compute, each on its own cluster and ports.
const natsTestTime = 60 * time.Second

// handedOut are the ports freePorts has returned in this process: the NATS tests run
// side by side, and none is given a port another was given.
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// freePorts returns n loopback ports free a moment ago, none returned before.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	var lns []net.Listener
	var ports []int
	for len(ports) < n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		if port := ln.Addr().(*net.TCPAddr).Port; !handedOut.ports[port] {
			handedOut.ports[port] = true
			ports = append(ports, port)
		}
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// natsCluster is an in-process NATS cluster with JetStream, on loopback.
type natsCluster struct {
	servers []*server.Server
	opts    []*server.Options // to start a stopped server again, same ports and store
	urls    string
}

// startNATSCluster runs n NATS servers routed to one another, JetStream on,
// their stores in temporary folders, and waits for a JetStream leader.
func startNATSCluster(t testing.TB, n int) *natsCluster {
	t.Helper()
	ports := freePorts(t, 2*n)
	cports := ports[n:]
	var routes []string
	for _, p := range cports {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	nc := &natsCluster{}
	t.Cleanup(func() {
		for _, s := range nc.servers {
			s.Shutdown()
			s.WaitForShutdown()
		}
	})
	var urls []string
	for i := range n {
		o := &server.Options{
			ServerName: fmt.Sprintf("n%d", i),
			Host:       "127.0.0.1",
			Port:       ports[i],
			NoSigs:     true,
			NoLog:      true,
			JetStream:  true,
			StoreDir:   t.TempDir(),
			Cluster:    server.ClusterOpts{Name: "chat-test", Host: "127.0.0.1", Port: cports[i]},
			Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
		}
		s, err := server.NewServer(o)
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		nc.servers = append(nc.servers, s)
		nc.opts = append(nc.opts, o)
	}
	// All started before waiting: a server of a cluster may wait for its
	// routes.
	for i, s := range nc.servers {
		if !s.ReadyForConnections(natsTestTime) {
			t.Fatalf("NATS server %d not ready within %v", i, natsTestTime)
		}
		urls = append(urls, s.ClientURL())
	}
	nc.urls = strings.Join(urls, ",")
	deadline := time.Now().Add(natsTestTime)
	for {
		leader := false
		for _, s := range nc.servers {
			leader = leader || s.JetStreamIsLeader()
		}
		if leader {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no JetStream leader within %v", natsTestTime)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nc
}

// startNATSNode runs a chat node of the cluster on a loopback listener.
func startNATSNode(t testing.TB, nc *natsCluster, o Options) *testServer {
	t.Helper()
	o.NATS.URLs = nc.urls
	if o.LeaveGrace == 0 {
		o.LeaveGrace = -1
	}
	var srv *Server
	var err error
	deadline := time.Now().Add(natsTestTime)
	for {
		// A cluster just started may still be placing its first stream.
		if srv, err = New(o); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	ts := &testServer{srv: srv, hs: hs, url: hs.URL}
	t.Cleanup(ts.stop)
	return ts
}

// waitText reads c's events until one has text want, and returns it; the
// events before it are returned too.
// mailAfterWelcome reads the welcome's "now online" line and the n events
// after it: the mail a login is offered comes after its welcome, on one node
// as on a cluster.
func mailAfterWelcome(t testing.TB, c *client, n int) (online ev, mail []ev) {
	t.Helper()
	if online = c.next(); !strings.HasPrefix(online.text, "now online: ") {
		t.Fatalf("%s (%s): after the welcome %q, want the \"now online\" line", c.nick, c.kind, online.text)
	}
	mail = make([]ev, n)
	for i := range mail {
		mail[i] = c.next()
	}
	return online, mail
}

func waitText(t testing.TB, c *client, want string) (ev, []ev) {
	t.Helper()
	var before []ev
	timeout := time.After(natsTestTime)
	for {
		select {
		case e := <-c.events:
			if e.text == want {
				return e, before
			}
			before = append(before, e)
		case <-timeout:
			t.Fatalf("%s (%s): no %q within %v; got %v", c.nick, c.kind, want, natsTestTime, before)
			return ev{}, nil
		}
	}
}

// expectNothingMore sends c a marker through ts and fails if any event
// reaches c before it: what c was told so far was told once.
func expectNothingMore(t testing.TB, ts *testServer, c *client, when string) {
	t.Helper()
	if status, body := ts.post(t, "quietcheck", c.nick, "marker"); status != 200 {
		t.Fatalf("marker: %d %s", status, body)
	}
	if _, before := waitText(t, c, "quietcheck: marker"); len(before) != 0 {
		t.Fatalf("%s: %v %s, want nothing", c.nick, before, when)
	}
}

func TestNATSBadURL(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"localhost:4222", "http://a:4222", "nats://", "nats://a:1,ftp://b"} {
		_, err := New(Options{NATS: NATSOptions{URLs: bad}})
		if err == nil || !strings.Contains(err.Error(), "is not a NATS server URL") {
			t.Errorf("NATS URLs %q: err = %v, want a refusal that names the allowed forms", bad, err)
		}
	}
}

// An SSE user on node A and a WebSocket user on node B chat, and a message
// sent on A while the receiver is offline is delivered at its login on B.
func TestNATSTwoNodesChat(t *testing.T) {
	t.Parallel()
	nc := startNATSCluster(t, 3)
	a := startNATSNode(t, nc, Options{})
	b := startNATSNode(t, nc, Options{})

	alice := a.login(t, "sse", "alice")
	waitText(t, alice, "Welcome alice!")
	if status, body := a.post(t, "alice", "bob", "are you there?"); status != 200 || !strings.Contains(body, "offline") {
		t.Fatalf("send to offline bob: %d %s", status, body)
	}
	waitText(t, alice, "You to bob (offline): are you there?")

	// A forged resume id, above any issued, confirms no mail.
	forged := b.resume(t, "sse", "bob", "999999")
	waitText(t, forged, "Welcome bob!")
	if _, after := mailAfterWelcome(t, forged, 1); !strings.HasSuffix(after[0].text, "): are you there?") {
		t.Fatalf("bob's login with a forged resume id: after the welcome %v, want alice's offline message", after)
	}
	forged.close()
	waitText(t, alice, "bob has left.")

	bob := b.login(t, "ws", "bob")
	waitText(t, bob, "Welcome bob!")
	online, after := mailAfterWelcome(t, bob, 1)
	if online.text != "now online: alice" || !strings.HasPrefix(after[0].text, "alice (") || !strings.HasSuffix(after[0].text, "): are you there?") {
		t.Fatalf("bob's login on B: after the welcome %v %v, want who is online and alice's offline message", online, after)
	}
	waitText(t, alice, "bob has joined.")

	bob.send("alice", "yes, on node B")
	waitText(t, alice, "bob: yes, on node B")
	waitText(t, bob, "You to alice: yes, on node B")
	alice.send("all", "hello everyone")
	e, _ := waitText(t, bob, "alice to all: hello everyone")
	if e.id <= online.id {
		t.Errorf("bob: id %d after %d: ids must grow", e.id, online.id)
	}
	waitText(t, alice, "alice to all: hello everyone")

	// The offline message was delivered on B: a new login of bob on A
	// does not get it again.
	bob.close()
	waitText(t, alice, "bob has left.")
	// (The WebSocket confirmed it with the pong to the ping after it; the
	// ack is a message of its own, so wait until A applied it.)
	deadline := time.Now().Add(natsTestTime)
	for {
		var boxed int
		a.srv.nats().mu.Lock()
		boxed = a.srv.nats().st.m.MailCount("bob")
		a.srv.nats().mu.Unlock()
		if boxed == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("bob's offline message still in the mailbox after its delivery")
		}
		time.Sleep(20 * time.Millisecond)
	}
	bob2 := a.login(t, "sse", "bob")
	if _, before := waitText(t, bob2, "Welcome bob!"); len(before) != 0 {
		t.Fatalf("bob's second login: %v before the welcome, want nothing", before)
	}
	sameState(t, a, b)
}

// sameState checks that two nodes derived the same state from the stream
// once both applied the same messages.
func sameState(t testing.TB, nodes ...*testServer) {
	t.Helper()
	deadline := time.Now().Add(natsTestTime)
	for {
		var dumps []string
		var seqs []uint64
		for _, ts := range nodes {
			n := ts.srv.nats()
			n.mu.Lock()
			seqs = append(seqs, n.st.applied)
			dumps = append(dumps, n.st.dump())
			n.mu.Unlock()
		}
		if !slices.ContainsFunc(seqs, func(s uint64) bool { return s != seqs[0] }) {
			for i := range dumps[1:] {
				if dumps[i+1] != dumps[0] {
					t.Fatalf("after sequence %d, node %d's state differs from node 0's:\n%s\n---\n%s", seqs[0], i+1, dumps[i+1], dumps[0])
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the nodes did not apply the same messages within %v: %v", natsTestTime, seqs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Presence is shared: a user on A sees B's users online, and stopping B
// tells A's users, once, that B's users left.
func TestNATSPresence(t *testing.T) {
	t.Parallel()
	leavesOnce(t, (*testServer).stop, "sse", "ws")
}

// leavesOnce logs in a user of kind bKind on node B and one of kind aKind on
// node A, checks that each sees the other, ends B with end (a stop or a
// crash) and checks that A's user is told once that B's user left.
func leavesOnce(t *testing.T, end func(*testServer), bKind, aKind string) {
	nc := startNATSCluster(t, 3)
	a := startNATSNode(t, nc, Options{NATS: NATSOptions{NodeTTL: 2 * time.Second}})
	b := startNATSNode(t, nc, Options{NATS: NATSOptions{NodeTTL: 2 * time.Second}})

	onB := b.login(t, bKind, "carol")
	waitText(t, onB, "Welcome carol!")
	onA := a.login(t, aKind, "dave")
	waitText(t, onA, "Welcome dave!")
	waitText(t, onA, "now online: carol")
	waitText(t, onB, "dave has joined.")

	end(b)
	waitText(t, onA, "carol has left.")
	// Once: a marker sent after it comes next.
	expectNothingMore(t, a, onA, "after carol has left")
}

// resumer is a receiver that follows its stream from node to node.
type resumer struct {
	t       testing.TB
	kind    string
	nick    string
	last    string
	texts   map[string]int
	order   []string
	resumes int
}

// readUntil reads the stream of r's user from one of the nodes, resuming
// on the next node whenever its stream ends, until it got marker.
func (r *resumer) readUntil(ctx context.Context, c *client, nodes func() *testServer, marker string) {
	for ctx.Err() == nil {
		if c == nil {
			c = nodes().resume(r.t, r.kind, r.nick, r.last)
			r.resumes++
		}
		for {
			select {
			case e := <-c.events:
				r.got(e)
				if e.text == marker {
					c.close()
					return
				}
				continue
			case <-c.done:
			case <-ctx.Done():
				r.t.Fatalf("%s: no %q within %v", r.nick, marker, natsTestTime)
			}
			break
		}
		// The stream ended: take what it delivered, then resume.
		for drained := false; !drained; {
			select {
			case e := <-c.events:
				r.got(e)
				if e.text == marker {
					return
				}
			default:
				drained = true
			}
		}
		c.close()
		c = nil
	}
}

// got counts an event; a message kept in the mailbox while the user was
// away ("tx (2026-01-02 15:04): m1") counts as the message ("tx: m1").
func (r *resumer) got(e ev) {
	r.last = strconv.FormatUint(e.id, 10)
	text := e.text
	if from, rest, ok := strings.Cut(text, " ("); ok && !strings.Contains(from, " ") {
		if _, msg, ok := strings.Cut(rest, "): "); ok {
			text = from + ": " + msg
		}
	}
	r.texts[text]++
	r.order = append(r.order, text)
}

// checkExactlyOnce checks that every acknowledged message came once, in
// the order sent, and that no message came twice.
func checkExactlyOnce(t testing.TB, r *resumer, prefix string, acked []int) {
	t.Helper()
	for text, n := range r.texts {
		if strings.HasPrefix(text, prefix) && n > 1 {
			t.Errorf("%q delivered %d times", text, n)
		}
	}
	for _, i := range acked {
		if text := fmt.Sprintf("%s%d", prefix, i); r.texts[text] != 1 {
			t.Errorf("%q acknowledged with 200, delivered %d times", text, r.texts[text])
		}
	}
	last := -1
	for _, text := range r.order {
		if rest, ok := strings.CutPrefix(text, prefix); ok {
			i, _ := strconv.Atoi(rest)
			if i <= last {
				t.Errorf("%q after message %d: one sender's order is kept", text, last)
			}
			last = i
		}
	}
}

// sendAll sends count messages from "tx" to "rx", each once, to whichever
// node pick gives; it returns the numbers acknowledged with 200.
func sendAll(t testing.TB, count int, pick func(i int) *testServer) []int {
	var acked []int
	for i := range count {
		ts := pick(i)
		if status, _ := ts.postQuiet("tx", "rx", fmt.Sprintf("m%d", i)); status == 200 {
			acked = append(acked, i)
		}
	}
	return acked
}

// postQuiet is post that reports a failed connection as status 0.
func (ts *testServer) postQuiet(from, to, text string) (int, string) {
	resp, err := httpPostJSON(ts.url+"/send", fmt.Sprintf(`{"from":%q,"to":%q,"text":%q}`, from, to, text))
	if err != nil {
		return 0, err.Error()
	}
	return resp.status, resp.body
}

// Node A is stopped in the middle of 2,000 sends, by a shutdown or a crash:
// its users resume on B with their last id, and every message acknowledged
// is delivered once.
func TestNATSNodeStopped(t *testing.T) {
	t.Parallel()
	t.Run("shutdown", func(t *testing.T) { nodeStopped(t, (*testServer).stop) })
	t.Run("crash", func(t *testing.T) { nodeStopped(t, (*testServer).crash) })
}

func nodeStopped(t *testing.T, stop func(*testServer)) {
	ctx, cancel := context.WithTimeout(context.Background(), natsTestTime)
	defer cancel()
	nc := startNATSCluster(t, 3)
	a := startNATSNode(t, nc, Options{LeaveGrace: 5 * time.Second})
	b := startNATSNode(t, nc, Options{LeaveGrace: 5 * time.Second})

	const count = 2000
	// The receiver resumes on B once A is stopping; the sender goes on
	// sending to A for 100 more messages (some fail: they are not
	// acknowledged), then to B.
	var stopping atomic.Bool
	nodes := func() *testServer {
		if stopping.Load() {
			return b
		}
		return a
	}
	rx := &resumer{t: t, kind: "sse", nick: "rx", texts: map[string]int{}}
	first := a.login(t, "sse", "rx")
	e, _ := waitText(t, first, "Welcome rx!")
	rx.last = strconv.FormatUint(e.id, 10)

	done := make(chan []int)
	go func() {
		acked := sendAll(t, count, func(i int) *testServer {
			if i == count/2 {
				stopping.Store(true)
				go stop(a)
			}
			if i < count/2+100 {
				return a
			}
			return b
		})
		for ctx.Err() == nil {
			if status, _ := b.postQuiet("tx", "rx", "done"); status == 200 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		done <- acked
	}()
	rx.readUntil(ctx, first, nodes, "tx: done")
	acked := <-done
	if len(acked) < count/2 {
		t.Fatalf("only %d of %d sends acknowledged", len(acked), count)
	}
	t.Logf("%d of %d sends acknowledged; the receiver resumed %d times", len(acked), count, rx.resumes)
	checkExactlyOnce(t, rx, "tx: m", acked)
}

// One NATS server of three is stopped mid-run: nothing acknowledged is lost.
func TestNATSServerStopped(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), natsTestTime)
	defer cancel()
	nc := startNATSCluster(t, 3)
	a := startNATSNode(t, nc, Options{LeaveGrace: 5 * time.Second})
	b := startNATSNode(t, nc, Options{LeaveGrace: 5 * time.Second})

	const count = 1500
	rx := &resumer{t: t, kind: "ws", nick: "rx", texts: map[string]int{}}
	first := b.login(t, "ws", "rx")
	e, _ := waitText(t, first, "Welcome rx!")
	rx.last = strconv.FormatUint(e.id, 10)

	done := make(chan []int)
	go func() {
		acked := sendAll(t, count, func(i int) *testServer {
			if i == count/3 {
				go func() {
					nc.servers[0].Shutdown()
				}()
			}
			return a
		})
		for ctx.Err() == nil {
			if status, _ := a.postQuiet("tx", "rx", "done"); status == 200 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		done <- acked
	}()
	rx.readUntil(ctx, first, func() *testServer { return b }, "tx: done")
	acked := <-done
	if len(acked) == 0 {
		t.Fatal("no send acknowledged")
	}
	t.Logf("%d of %d sends acknowledged", len(acked), count)
	checkExactlyOnce(t, rx, "tx: m", acked)
	sameState(t, a, b)
}

type httpAnswer struct {
	status int
	body   string
}

var natsTestClient = &http.Client{Timeout: 15 * time.Second}

// httpPostJSON posts body; a failed connection is an error.
func httpPostJSON(u, body string) (httpAnswer, error) {
	resp, err := natsTestClient.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		return httpAnswer{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return httpAnswer{resp.StatusCode, string(b)}, nil
}

// crash stops a node as a crash would: no goodbye to the cluster (its key
// stays until it expires), its connections dropped.
func (ts *testServer) crash() {
	n := ts.srv.nats()
	n.mu.Lock()
	n.closing = true
	n.mu.Unlock()
	n.stop.Do(func() { close(n.quit) })
	n.wg.Wait()
	n.log.Close()
	// Its streams end (hijacked SSE connections are not the test server's
	// to close).
	n.mu.Lock()
	for _, cs := range n.local {
		for c := range cs {
			c.Cut("crashed")
		}
	}
	n.mu.Unlock()
	ts.hs.CloseClientConnections()
	ts.hs.Close()
}

// A node that crashes takes its users' presence with it once its key
// expired: the others are told they left, once.
func TestNATSNodeCrashed(t *testing.T) {
	t.Parallel()
	leavesOnce(t, (*testServer).crash, "ws", "sse")
}

// A server without JetStream, and a stream CHAT that is not the chat's,
// are refused with what is wrong and what is needed.
func TestNATSRefusesBadCluster(t *testing.T) {
	t.Parallel()
	plain, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go plain.Start()
	t.Cleanup(plain.Shutdown)
	if !plain.ReadyForConnections(20 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	_, err = New(Options{NATS: NATSOptions{URLs: plain.ClientURL()}})
	if err == nil || !strings.Contains(err.Error(), "JetStream is not enabled") {
		t.Errorf("server without JetStream: err = %v, want it said", err)
	}

	single, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true, JetStream: true, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	go single.Start()
	t.Cleanup(single.Shutdown)
	if !single.ReadyForConnections(20 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	conn, err := nats.Connect(single.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	js, _ := jetstream.New(conn)
	ctx, cancel := context.WithTimeout(context.Background(), natsTestTime)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: cluster.Stream, Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	_, err = New(Options{NATS: NATSOptions{URLs: single.ClientURL()}})
	if err == nil || !strings.Contains(err.Error(), "exists that is not the chat's") || !strings.Contains(err.Error(), "orders.>") {
		t.Errorf("stream CHAT of other subjects: err = %v, want it refused, naming its subjects", err)
	}
}

// A WebSocket's frames are published without waiting for one another, and
// still arrive in the order sent, on another node.
func TestNATSWebSocketOrder(t *testing.T) {
	t.Parallel()
	nc := startNATSCluster(t, 3)
	a := startNATSNode(t, nc, Options{})
	b := startNATSNode(t, nc, Options{})
	rx := b.login(t, "sse", "rx")
	waitText(t, rx, "Welcome rx!")
	tx := a.login(t, "ws", "tx")
	waitText(t, tx, "Welcome tx!")
	waitText(t, rx, "tx has joined.")
	const count = 500
	for i := range count {
		tx.send("rx", fmt.Sprintf("f%d", i))
	}
	for i := range count {
		if _, before := waitText(t, rx, fmt.Sprintf("tx: f%d", i)); len(before) != 0 {
			t.Fatalf("rx: %v before frame %d", before, i)
		}
	}
	select {
	case e := <-tx.errs:
		t.Fatalf("tx was told: %s", e)
	default:
	}
}

// TestBrowserChat with alice's page on node A and bob's on node B.
func TestNATSBrowserChat(t *testing.T) {
	t.Parallel()
	nc := startNATSCluster(t, 3)
	a := startNATSNode(t, nc, Options{})
	b := startNATSNode(t, nc, Options{})
	browserChat(t, a.srv, b.srv)
}

// A node started after the chat began builds its state from the stream:
// the same as the others', and a user resumes there from an id of another
// node with what it missed.
func TestNATSNodeStartsLater(t *testing.T) {
	t.Parallel()
	nc := startNATSCluster(t, 3)
	a := startNATSNode(t, nc, Options{})
	hana := a.login(t, "sse", "hana")
	e, _ := waitText(t, hana, "Welcome hana!")
	hana.close()
	for i := range 20 {
		if status, body := a.post(t, "ivan", "all", fmt.Sprintf("news %d", i)); status != 200 {
			t.Fatalf("send: %d %s", status, body)
		}
	}
	if status, body := a.post(t, "ivan", "hana", "are you back?"); status != 200 || !strings.Contains(body, "offline") {
		t.Fatalf("send to offline hana: %d %s", status, body)
	}
	c := startNATSNode(t, nc, Options{})
	sameState(t, a, c)
	back := c.resume(t, "ws", "hana", strconv.FormatUint(e.id, 10))
	_, before := waitText(t, back, "Welcome hana!")
	_, mail := mailAfterWelcome(t, back, 1)
	before = append(before, mail...)
	var texts []string
	for _, e := range before {
		texts = append(texts, e.text)
	}
	if len(texts) != 21 || texts[0] != "ivan to all: news 0" || texts[19] != "ivan to all: news 19" || !strings.HasPrefix(texts[20], "ivan (") || !strings.HasSuffix(texts[20], "): are you back?") {
		t.Fatalf("hana's resume on the new node replayed %q, want the 20 news and ivan's offline message", texts)
	}
}

// The mailbox limits hold for the whole chat: a node refuses a message to a
// mailbox that another node's messages filled.
func TestNATSMailboxLimit(t *testing.T) {
	t.Parallel()
	nc := startNATSCluster(t, 3)
	a := startNATSNode(t, nc, Options{MaxMailbox: 2})
	b := startNATSNode(t, nc, Options{MaxMailbox: 2})
	for i, ts := range []*testServer{a, b} {
		if status, body := ts.post(t, "kim", "lee", fmt.Sprintf("note %d", i)); status != 200 {
			t.Fatalf("offline message %d: %d %s", i, status, body)
		}
	}
	status, body := a.post(t, "kim", "lee", "one too many")
	if status != 409 || !strings.Contains(body, "mailbox full: lee is offline and already has 2 messages waiting") {
		t.Fatalf("third offline message: %d %s, want 409 mailbox full", status, body)
	}
	lee := b.login(t, "sse", "lee")
	waitText(t, lee, "Welcome lee!")
	if _, before := mailAfterWelcome(t, lee, 2); len(before) != 2 || !strings.HasSuffix(before[0].text, "): note 0") || !strings.HasSuffix(before[1].text, "): note 1") {
		t.Fatalf("lee's login: %v after the welcome, want note 0 and note 1", before)
	}
}

// A node that lost NATS refuses sends with 503, saying why, reconnects by
// itself once NATS is back, and its streams go on.
func TestNATSReconnects(t *testing.T) {
	t.Parallel()
	nc := startNATSCluster(t, 3)
	a := startNATSNode(t, nc, Options{})
	mia := a.login(t, "sse", "mia")
	waitText(t, mia, "Welcome mia!")
	for _, s := range nc.servers {
		s.Shutdown()
		s.WaitForShutdown()
	}
	deadline := time.Now().Add(natsTestTime)
	for a.srv.nats().log.Connected() {
		if time.Now().After(deadline) {
			t.Fatal("still connected to NATS after its servers stopped")
		}
		time.Sleep(20 * time.Millisecond)
	}
	status, body := a.post(t, "ned", "all", "lost")
	if want := "chat: not connected to NATS (" + nc.urls + "): sends are refused until it reconnects"; status != 503 || !strings.Contains(body, want) {
		t.Fatalf("send without NATS: %d %s, want 503 and %q", status, body, want)
	}
	// The same servers again: same ports, same stores.
	for i, o := range nc.opts {
		s, err := server.NewServer(o)
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		nc.servers[i] = s
	}
	deadline = time.Now().Add(natsTestTime)
	for {
		status, body := a.post(t, "ned", "all", "back")
		if status == 200 {
			break
		}
		if status != 503 || time.Now().After(deadline) {
			t.Fatalf("send once NATS is back: %d %s", status, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	waitText(t, mia, "ned to all: back")
}

// clusterMail is what nick's mailbox holds on node ts, as "from: text".
func clusterMail(ts *testServer, nick string) []string {
	n := ts.srv.nats()
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, m := range n.st.m.Mailbox(nick) {
		out = append(out, m.From+": "+m.Text)
	}
	return out
}

// Presence notices coalesce on a cluster as on one node: the joins that
// follow one another within the presence window are told together, once,
// in one event for everyone, whichever node each login went to.
func TestNATSPresenceCoalesced(t *testing.T) {
	t.Parallel()
	nc := startNATSCluster(t, 3)
	o := Options{PresenceWindow: 2 * time.Second}
	a := startNATSNode(t, nc, o)
	b := startNATSNode(t, nc, o)
	obs := a.login(t, "sse", "obs")
	waitText(t, obs, "Welcome obs!")
	for i, ts := range []*testServer{a, b, a, b} {
		c := ts.login(t, "sse", fmt.Sprint("u", i))
		waitText(t, c, fmt.Sprintf("Welcome u%d!", i))
	}
	_, before := waitText(t, obs, "u0, u1 and 2 others joined.")
	if len(before) != 1 || before[0].text != "now online: " {
		t.Fatalf("obs was told %v before the grouped notice, want only its welcome's list", before)
	}
	obs2 := b.login(t, "sse", "obs2")
	if _, before := waitText(t, obs2, "Welcome obs2!"); len(before) != 0 {
		t.Fatalf("obs2: %v before its welcome", before)
	}
	sameState(t, a, b)
}

// A message to oneself while offline waits in one's mailbox on a cluster
// as on one node, and is offered at the next login.
func TestNATSOfflineSelfMessage(t *testing.T) {
	t.Parallel()
	nc := startNATSCluster(t, 3)
	a := startNATSNode(t, nc, Options{})
	b := startNATSNode(t, nc, Options{})
	if status, body := a.post(t, "ann", "ann", "note to self"); status != 200 || !strings.Contains(body, "offline") {
		t.Fatalf("to oneself, offline: %d %s, want the offline acknowledgement", status, body)
	}
	sameState(t, a, b)
	if got := clusterMail(b, "ann"); len(got) != 1 || got[0] != "ann: note to self" {
		t.Fatalf("ann's mailbox on b: %q", got)
	}
	ann := b.login(t, "sse", "ann")
	waitText(t, ann, "Welcome ann!")
	if _, mail := mailAfterWelcome(t, ann, 1); !strings.HasSuffix(mail[0].text, "): note to self") {
		t.Fatalf("ann's login: %v", mail)
	}
}

// The number of mailboxes is capped during a leave grace on a cluster as on
// one node: a private message to a user whose last stream just closed is
// delivered to its grace, but kept in a new mailbox only while the chat
// has room for one.
func TestNATSGraceMailboxCap(t *testing.T) {
	t.Parallel()
	nc := startNATSCluster(t, 3)
	o := Options{MaxMailboxes: 2, LeaveGrace: time.Hour}
	a := startNATSNode(t, nc, o)
	b := startNATSNode(t, nc, o)
	bob := a.login(t, "sse", "bob")
	waitText(t, bob, "Welcome bob!")
	bob.close()
	deadline := time.Now().Add(natsTestTime)
	for {
		a.srv.nats().mu.Lock()
		_, open := a.srv.nats().st.m.Online("bob")
		a.srv.nats().mu.Unlock()
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("bob's stream did not close")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Two senders from two addresses fill the chat's two mailboxes.
	for i, to := range []string{"cat", "dan"} {
		p := message{From: fmt.Sprint("s", i), To: to, Text: "hi", Time: time.Now(), Addr: fmt.Sprint("192.0.2.", i)}
		if res := postNow(t.Context(), b.srv, p); res.err != nil || !res.offline {
			t.Fatalf("to offline %s: %+v", to, res)
		}
	}
	p := message{From: "eve", To: "bob", Text: "during the grace", Time: time.Now(), Addr: "192.0.2.9"}
	if res := postNow(t.Context(), b.srv, p); res.err != nil || res.offline {
		t.Fatalf("to bob within his grace: %+v, want delivered", res)
	}
	sameState(t, a, b)
	if got := clusterMail(a, "bob"); len(got) != 0 {
		t.Fatalf("bob's mailbox holds %q past the chat's 2 mailboxes", got)
	}
}
