package chatserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/room"
	"github.com/wasmgap/wasmgap/chatserver/internal/store"
	"github.com/wasmgap/wasmgap/chatserver/internal/stream"
)

// failReq fails the batch it is in, as a store failure would.
type failReq struct{ reply }

var errInjected = errors.New("injected store failure")

func (r *failReq) apply(*hub, *store.Tx) (result, error) { return result{}, errInjected }

// holdHub runs a request that keeps the hub busy until the returned
// function is called: the requests submitted meanwhile make one batch.
func holdHub(t *testing.T, h *hub) (release func()) {
	t.Helper()
	started, done := make(chan struct{}), make(chan struct{})
	r := &inspectReq{fn: func(*hub) {
		close(started)
		<-done
	}}
	// Handled at once by the caller when the hub is idle: on a goroutine of its own.
	go h.submit(context.Background(), r)
	<-started
	return func() {
		close(done)
		h.wait(r)
	}
}

// hubState is what a failed batch must leave as it was.
type hubState struct {
	seq       uint64
	mailboxes map[string]int
	users     map[string]int // nick → streams
	used      int64
	events    int // log events in the memtable
}

func stateOf(ts *testServer) hubState {
	var s hubState
	ts.srv.localHub().do(context.Background(), &inspectReq{fn: func(h *hub) {
		s = hubState{seq: h.m.Last(), mailboxes: map[string]int{}, users: h.m.Streams(), used: h.store.Used()}
		st, err := h.store.Stats()
		if err != nil {
			panic(err)
		}
		s.events = st.MemEvents
		for _, nick := range h.m.MailboxNicks() {
			s.mailboxes[nick] = h.m.MailCount(nick)
		}
	}})
	return s
}

func (s hubState) String() string {
	return fmt.Sprintf("seq %d, mailboxes %v, users %v, %d bytes used, %d events in the memtable", s.seq, s.mailboxes, s.users, s.used, s.events)
}

// TestFailedBatchRestoresMemory: when a batch fails, nothing of it is
// stored, and the hub's memory is as before it: the sequence, the mailbox
// counts, the users (a join and a leave of the batch are taken back), the
// memtable. The next sends take the ids the failed batch had taken, and a
// restart finds the mailboxes the hub counted.
func TestFailedBatchRestoresMemory(t *testing.T) {
	ts := startServer(t, Options{})
	h := ts.srv.localHub()
	john := ts.login(t, "sse", "john")
	john.expect("Welcome john!", "now online: ")
	if status, body := ts.post(t, "mary", "carol", "waiting"); status != 200 {
		t.Fatalf("send: %d %s", status, body)
	}
	before := stateOf(ts)

	release := holdHub(t, h)
	eve := stream.NewConn("eve", 16)
	batch := []request{
		&postReq{msg: message{From: "mary", To: "john", Text: "lost 1", Time: time.Now()}},
		&postReq{msg: message{From: "mary", To: "carol", Text: "lost 2", Time: time.Now()}},
		&postReq{msg: message{From: "mary", To: "dave", Text: "lost 3", Time: time.Now()}},
		&postReq{msg: message{From: "mary", To: "all", Text: "lost 4", Time: time.Now()}},
		&joinReq{conn: eve},
		&failReq{},
	}
	for _, r := range batch {
		if err := h.submit(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	release()
	for i, r := range batch {
		if res := h.wait(r); !errors.Is(res.err, errInjected) {
			t.Errorf("request %d of the failed batch: %v, want the store's error", i, res.err)
		}
	}
	if after := stateOf(ts); after.String() != before.String() {
		t.Fatalf("after a failed batch the hub holds\n%v\nbefore it\n%v", after, before)
	}

	// Nothing of it was delivered; the next event takes the next id.
	if status, body := ts.msg(t, "mary", "john", "kept"); status != 200 {
		t.Fatalf("send: %d %s", status, body)
	}
	if e := john.next(); e.text != "mary: kept" || e.id != before.seq+1 {
		t.Fatalf("john got %d %q, want %d %q", e.id, e.text, before.seq+1, "mary: kept")
	}
	john.close()
	ts.waitStreams(t, "john", -1)
	counted := stateOf(ts).mailboxes

	ts.stop()
	st, state, err := store.Open(ts.dir+"/chat.db", true, ts.srv.opts.Logger)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if !maps.Equal(state.Mailboxes, counted) || state.Mailboxes["carol"] != 1 {
		t.Fatalf("after a restart the store has mailboxes %v, the hub counted %v (carol: 1 message)", state.Mailboxes, counted)
	}
}

// TestStoreLimitPerSend: the store limit is checked before each send, not
// once per batch: a batch of sends stops at the limit, overshooting it by
// at most one send.
func TestStoreLimitPerSend(t *testing.T) {
	ts := startServer(t, Options{MaxStoreBytes: 1})
	h := ts.srv.localHub()
	var used int64
	h.do(context.Background(), &inspectReq{fn: func(h *hub) { used = h.store.Used() }})
	// Room for about ten sends of this size above what the store holds.
	text := strings.Repeat("x", 1000)
	h.do(context.Background(), &inspectReq{fn: func(h *hub) { h.maxBytes = used + 10*1100 }})

	release := holdHub(t, h)
	var batch []request
	for i := range 100 {
		batch = append(batch, &postReq{msg: message{From: "mary", To: "all", Text: fmt.Sprint(i, text), Time: time.Now()}})
	}
	for _, r := range batch {
		if err := h.submit(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	release()
	stored, refused := 0, 0
	for i, r := range batch {
		res := h.wait(r)
		switch {
		case res.err == nil:
			if refused > 0 {
				t.Fatalf("send %d stored after a refused one", i)
			}
			stored++
		case errors.Is(res.err, ErrStoreFull):
			refused++
		default:
			t.Fatalf("send %d: %v", i, res.err)
		}
	}
	var limit int64
	h.do(context.Background(), &inspectReq{fn: func(h *hub) { used, limit = h.store.Used(), h.maxBytes }})
	t.Logf("%d stored, %d refused; %d bytes used of %d", stored, refused, used, limit)
	if stored == 0 || refused == 0 || used > limit+1100 {
		t.Fatalf("%d sends stored, %d refused, %d bytes used: want the batch to stop at the limit of %d (one send over at most)", stored, refused, used, limit)
	}
}

// TestFailedLeaveRetried: a stream's leave in a failed batch is taken back
// with the rest (the user is online again in the hub's memory, as in the
// store) and submitted again: the user then leaves. (eve's stream is the
// hub's side alone: no handler would send its leave again.)
func TestFailedLeaveRetried(t *testing.T) {
	ts := startServer(t, Options{})
	h := ts.srv.localHub()
	eve := stream.NewConn("eve", 16)
	if res := h.do(context.Background(), &joinReq{conn: eve}); res.err != nil {
		t.Fatal(res.err)
	}

	retried := make(chan request, 1)
	h.do(context.Background(), &inspectReq{fn: func(h *hub) { h.resubmit = func(r request) { retried <- r } }})

	release := holdHub(t, h)
	leave, fail := &leaveReq{conn: eve}, &failReq{}
	for _, r := range []request{leave, fail} {
		if err := h.submit(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	release()
	if res := h.wait(leave); !errors.Is(res.err, errInjected) {
		t.Fatalf("leave in a failed batch: %v", res.err)
	}
	h.wait(fail)
	if n := ts.streams("eve"); n != 1 {
		t.Fatalf("after the failed leave eve has %d streams, want 1 (the leave taken back)", n)
	}
	again := <-retried
	if res := h.do(context.Background(), again); res.err != nil {
		t.Fatalf("the leave submitted again: %v", res.err)
	}
	if n := ts.streams("eve"); n != -1 {
		t.Fatalf("after the leave submitted again eve has %d streams, want none", n)
	}
}

// TestIdleHubAnswersOnTheCaller: a request that finds the hub idle is
// handled on its caller's goroutine (no goroutine woken for it); one
// submitted while the hub is busy waits its turn and is handled, in order,
// by the hub's goroutine.
func TestIdleHubAnswersOnTheCaller(t *testing.T) {
	ts := startServer(t, Options{})
	h := ts.srv.localHub()
	ts.prune() // the hub's first pruning, at its start, is over: the hub is idle
	var inline bool
	r := &inspectReq{fn: func(*hub) { inline = strings.Contains(string(debug.Stack()), "(*hub).submit(") }}
	if res := h.do(t.Context(), r); res.err != nil || !inline {
		t.Fatalf("a request to an idle hub: handled on the caller %v (err %v), want true", inline, res.err)
	}

	release := holdHub(t, h)
	var order []int
	var queued []*inspectReq
	for i := range 3 {
		q := &inspectReq{fn: func(*hub) {
			order = append(order, i)
			inline = inline || strings.Contains(string(debug.Stack()), "(*hub).submit(")
		}}
		if err := h.submit(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		queued = append(queued, q)
	}
	inline = false
	release()
	for _, q := range queued {
		h.wait(q)
	}
	if fmt.Sprint(order) != "[0 1 2]" || inline {
		t.Fatalf("requests sent to a busy hub: handled in order %v, on a caller %v; want [0 1 2] on the hub's goroutine", order, inline)
	}
}

// TestLoginGoesAheadOfSyncs: while the syncer still holds an earlier
// batch, a login that replays nothing is answered, though its own batch
// stores its "has joined." (no presence window: every notice is told at
// once), which the others get only after the sync; and one that resumes
// waits for that batch (its replay may show the batch's events).
func TestLoginGoesAheadOfSyncs(t *testing.T) {
	ts := startServer(t, Options{PresenceWindow: -1})
	h := ts.srv.localHub()
	bob := stream.NewConn("bob", 16)
	if res := h.do(t.Context(), &joinReq{conn: bob}); res.err != nil {
		t.Fatal(res.err)
	}
	holding, held := make(chan struct{}), make(chan struct{})
	post := &postReq{msg: message{From: "bob", To: "all", Text: "stored", Time: time.Now()}}
	post.then = func(result) { close(holding); <-held } // on the syncer, once synced
	if err := h.submit(t.Context(), post); err != nil {
		t.Fatal(err)
	}
	<-holding

	before := bob.Queued()
	answered := make(chan result, 1)
	go func() { answered <- h.do(context.Background(), &joinReq{conn: stream.NewConn("eve", 16)}) }()
	select {
	case res := <-answered:
		if res.err != nil {
			t.Fatal(res.err)
		}
	case <-time.After(waitFor):
		close(held)
		t.Fatal("a login that replays nothing was not answered while an earlier batch's answer waited on the syncer")
	}
	recs, _, err := h.store.ReadLog("bob", 0, math.MaxUint64, 100)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(recs, func(r *store.Record) bool { return r.Text == room.JoinedText("eve") }); i < 0 {
		t.Fatalf("eve's login stored no %q: it did not test a login whose batch stores", room.JoinedText("eve"))
	}
	if bob.Queued() != before {
		t.Fatal("bob was told of eve's login before it was synced")
	}

	resumed := &joinReq{conn: stream.NewConn("ann", 16), hasResume: true}
	if err := h.submit(t.Context(), resumed); err != nil {
		t.Fatal(err)
	}
	for h.queued.Load() > 0 {
		time.Sleep(time.Millisecond)
	}
	h.mu.Lock() // the hub handled it
	h.mu.Unlock()
	select {
	case <-resumed.ch:
		t.Fatal("a login that resumes was answered before the batch before it was synced and answered")
	default:
	}
	close(held)
	if res := h.wait(resumed); res.err != nil {
		t.Fatal(res.err)
	}
}
