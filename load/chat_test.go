package load

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver"
)

// newChat starts the project's chat server on a loopback httptest listener.
func newChat(t *testing.T, opts chatserver.Options) string {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	srv, err := chatserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		ts.Close()
	})
	return ts.URL + "/"
}

func TestScenarios(t *testing.T) {
	target := newChat(t, chatserver.Options{})
	tests := []struct {
		name string
		o    ScenarioOptions
	}{
		{"chat-send over SSE, POST", ScenarioOptions{Scenario: ScenarioChatSend, Receivers: 5, Senders: 4, Messages: 300}},
		{"chat-send over WS, GET /msg", ScenarioOptions{Scenario: ScenarioChatSend, Transport: "ws", Receivers: 5, Senders: 4, Messages: 300, SendVia: "get"}},
		{"chat-send open model", ScenarioOptions{Scenario: ScenarioChatSend, Receivers: 3, Messages: 100, Rate: 500}},
		{"sse-fanout", ScenarioOptions{Scenario: ScenarioSSEFanout, Receivers: 20, Messages: 50, Rate: 200}},
		{"ws-fanout", ScenarioOptions{Scenario: ScenarioWSFanout, Receivers: 20, Messages: 50, Rate: 200}},
		{"ws-fanout bounded by time", ScenarioOptions{Scenario: ScenarioWSFanout, Receivers: 5, Duration: 500 * time.Millisecond, Rate: 100}},
		{"chat-send ramped", ScenarioOptions{Scenario: ScenarioChatSend, Receivers: 3, Messages: 40, Rate: 400, Ramp: 200 * time.Millisecond}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Target = target
			// Every message must arrive; a drain ends at the last delivery, so a long one
			// costs nothing unless the machine is slow, and then it is what keeps the count.
			tc.o.Drain = time.Minute
			var phases []string
			tc.o.ProgressEvery = 10 * time.Millisecond
			tc.o.Progress = func(p Progress) {
				if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
					phases = append(phases, p.Phase)
				}
			}
			rep, err := RunScenario(context.Background(), tc.o)
			if err != nil {
				t.Fatal(err)
			}
			d := rep.Delivery
			if rep.Sent != d.Sent+d.SendErrors || rep.Sent == 0 {
				t.Fatalf("sent %d, accepted %d + errors %d", rep.Sent, d.Sent, d.SendErrors)
			}
			if tc.o.Messages > 0 && rep.Sent != int64(tc.o.Messages) {
				t.Errorf("sent %d, want %d", rep.Sent, tc.o.Messages)
			}
			if d.SendErrors != 0 {
				t.Errorf("send errors %v", rep.ErrorExamples)
			}
			per := int64(1)
			if tc.o.Scenario != ScenarioChatSend {
				per = int64(tc.o.Receivers)
			}
			if d.Expected != d.Sent*per || d.Delivered != d.Expected || d.Lost != 0 || d.Duplicated != 0 {
				t.Errorf("delivery %+v: want every accepted message delivered once", *d)
			}
			if rep.Latency.Count != d.Delivered {
				t.Errorf("latency samples %d, deliveries %d", rep.Latency.Count, d.Delivered)
			}
			if d.RampUp <= 0 || d.Receivers != tc.o.Receivers {
				t.Errorf("ramp-up %s receivers %d", d.RampUp, d.Receivers)
			}
			if rep.Ramp != tc.o.Ramp {
				t.Errorf("report's ramp %v, want %v", rep.Ramp, tc.o.Ramp)
			}
			if p := newPacer(tc.o.Rate, tc.o.Ramp); p != nil && tc.o.Messages > 0 && rep.Elapsed < p.At(int64(tc.o.Messages-1)) {
				// No message leaves before its turn: the last is due At(n-1) after the first.
				t.Errorf("sent %d messages in %v: ahead of the pacer, whose last is due at %v", tc.o.Messages, rep.Elapsed, p.At(int64(tc.o.Messages-1)))
			}
			if len(phases) < 2 || phases[0] != "connect" {
				t.Errorf("progress phases %v", phases)
			}
		})
	}
}

func TestScenarioValidate(t *testing.T) {
	tests := []ScenarioOptions{
		{Scenario: "flood", Target: "http://127.0.0.1:1/", Messages: 1},
		{Scenario: ScenarioChatSend, Target: "127.0.0.1", Messages: 1},
		{Scenario: ScenarioChatSend, Target: "http://127.0.0.1:1/"},
		{Scenario: ScenarioChatSend, Target: "http://127.0.0.1:1/", Messages: 1, Transport: "tcp"},
		{Scenario: ScenarioChatSend, Target: "http://127.0.0.1:1/", Messages: MaxMessages + 1},
		{Scenario: ScenarioChatSend, Target: "http://127.0.0.1:1/", Messages: 1, SendVia: "smtp"},
		{Scenario: ScenarioChatSend, Target: "http://127.0.0.1:1/", Messages: 1, Ramp: time.Second},
		{Scenario: ScenarioChatSend, Target: "http://127.0.0.1:1/", Messages: 1, Rate: 10, Ramp: -time.Second},
	}
	for _, o := range tests {
		if _, err := RunScenario(context.Background(), o); err == nil {
			t.Errorf("RunScenario(%+v) accepted invalid options", o)
		}
	}
}

func TestScenarioReceiversCannotLogIn(t *testing.T) {
	// A server that is not a chat: logging in must fail with a clear error, not hang.
	srv, _ := newServer(t, nil)
	_, err := RunScenario(context.Background(), ScenarioOptions{Scenario: ScenarioSSEFanout, Target: srv.URL, Messages: 1, Timeout: time.Second})
	if err == nil {
		t.Fatal("want an error when receivers cannot log in")
	}
}

// TestScenarioDrain: the drain ends when the last expected delivery arrives, however long it
// was allowed to wait, and says whether everything arrived.
func TestScenarioDrain(t *testing.T) {
	newRun := func() (*scenario, *shard) {
		o := &ScenarioOptions{Scenario: ScenarioChatSend, Target: "http://127.0.0.1:1/", Receivers: 1, Messages: 3}
		o.defaults()
		s := newScenario(o)
		s.expected.Store(3)
		return s, &s.shards[0]
	}
	msg := func(s *scenario, k int) event { return event{text: fmt.Sprintf("x to y: %s%d", s.token, k)} }

	s, sh := newRun()
	result := make(chan bool, 1)
	go func() { result <- s.drain(context.Background(), time.Hour) }()
	for k := range 3 {
		s.receive(sh, nil, nil, msg(s, k))
	}
	select {
	case ok := <-result:
		if !ok {
			t.Error("drain said deliveries were missing after all three arrived")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("drain still waiting 30s after the last delivery (it may wait an hour)")
	}

	// One message never arrives: the drain gives up at its bound and says so.
	s, sh = newRun()
	s.receive(sh, nil, nil, msg(s, 0))
	s.receive(sh, nil, nil, msg(s, 0)) // a duplicate does not count
	s.receive(sh, nil, nil, msg(s, 2))
	if s.drain(context.Background(), 10*time.Millisecond) {
		t.Error("drain said everything arrived with message 1 missing")
	}
	if s.duplicated.Load() != 1 || s.delivered.Load() != 2 {
		t.Errorf("delivered %d duplicated %d, want 2 and 1", s.delivered.Load(), s.duplicated.Load())
	}
	// A cancelled run ends the drain too.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if s.drain(ctx, time.Hour) {
		t.Error("drain of a cancelled run said everything arrived")
	}
}

// TestScenarioTwoTargets: receivers and sends are spread round-robin over two chat nodes, and
// the report says how many went where. The two chats are separate (no broker between them):
// with receivers a multiple of the targets, each message is sent to its receiver's node.
func TestScenarioTwoTargets(t *testing.T) {
	a, b := newChat(t, chatserver.Options{}), newChat(t, chatserver.Options{})
	for _, transport := range []string{"sse", "ws"} {
		t.Run(transport, func(t *testing.T) {
			rep, err := RunScenario(context.Background(), ScenarioOptions{Scenario: ScenarioChatSend, Targets: []string{a, b},
				Transport: transport, Receivers: 6, Senders: 4, Messages: 200, Drain: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			d := rep.Delivery
			if d.Sent != 200 || d.Delivered != 200 || d.Lost != 0 || d.Duplicated != 0 {
				t.Fatalf("delivery %+v: want 200 sent and delivered once", *d)
			}
			if len(d.Targets) != 2 || d.Targets[0].URL != a || d.Targets[1].URL != b {
				t.Fatalf("targets %+v: want %s and %s", d.Targets, a, b)
			}
			for _, tg := range d.Targets {
				if tg.Receivers != 3 || tg.Welcomed != 3 || tg.Sent != 100 || tg.SendErrors != 0 || tg.Delivered != 100 {
					t.Errorf("target %+v: want 3 receivers welcomed, 100 sent and 100 delivered", tg)
				}
			}
			if !strings.Contains(rep.Target, a) || !strings.Contains(rep.Target, b) {
				t.Errorf("report target %q lacks a node", rep.Target)
			}
		})
	}
	// One target: no split in the report.
	rep, err := RunScenario(context.Background(), ScenarioOptions{Scenario: ScenarioChatSend, Targets: []string{a},
		Receivers: 2, Messages: 10, Drain: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Delivery.Targets != nil || rep.Delivery.Delivered != 10 {
		t.Errorf("one target: delivery %+v", *rep.Delivery)
	}
}

// loginCounter wraps a chat: it counts the SSE logins under way (from the request to the
// first write, flush or hijack, one of which carries the welcome: counted off just before it,
// so that the count is never above the client's; a write, because a full response buffer
// reaches the client without a flush; a hijack, because the chat writes a stream on its own
// connection and its handler returns only after the welcome is out) and keeps the most seen
// at once.
type loginCounter struct {
	h             http.Handler
	inFlight, max atomic.Int64
}

func (c *loginCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A resume (Last-Event-ID) is a reconnect after the welcome, not a login.
	if r.Header.Get("Accept") != "text/event-stream" || r.Header.Get("Last-Event-ID") != "" {
		c.h.ServeHTTP(w, r)
		return
	}
	n := c.inFlight.Add(1)
	for m := c.max.Load(); n > m && !c.max.CompareAndSwap(m, n); m = c.max.Load() {
	}
	fw := &firstFlush{ResponseWriter: w, done: func() { c.inFlight.Add(-1) }}
	defer fw.flushed()
	c.h.ServeHTTP(fw, r)
}

type firstFlush struct {
	http.ResponseWriter
	once sync.Once
	done func()
}

func (f *firstFlush) flushed()                    { f.once.Do(f.done) }
func (f *firstFlush) Unwrap() http.ResponseWriter { return f.ResponseWriter }
func (f *firstFlush) Flush()                      { f.flushed(); f.ResponseWriter.(http.Flusher).Flush() }
func (f *firstFlush) FlushError() error           { f.Flush(); return nil }
func (f *firstFlush) Write(b []byte) (int, error) { f.flushed(); return f.ResponseWriter.Write(b) }
func (f *firstFlush) WriteHeader(code int)        { f.ResponseWriter.WriteHeader(code) }
func (f *firstFlush) Header() http.Header         { return f.ResponseWriter.Header() }
func (f *firstFlush) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	f.flushed()
	return http.NewResponseController(f.ResponseWriter).Hijack()
}

// TestScenarioFanoutBoundedLogins: a few hundred receivers log in at most LoginConcurrency at
// a time, and every one receives every broadcast once.
func TestScenarioFanoutBoundedLogins(t *testing.T) {
	srv, err := chatserver.New(chatserver.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	lc := &loginCounter{h: srv.Handler()}
	ts := httptest.NewServer(lc)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		ts.Close()
	})
	const receivers, concurrency = 300, 8
	rep, err := RunScenario(context.Background(), ScenarioOptions{Scenario: ScenarioSSEFanout, Target: ts.URL + "/",
		Receivers: receivers, LoginConcurrency: concurrency, Messages: 5, Drain: time.Minute, LoginTime: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Delivery
	if d.Welcomed != receivers || d.Expected != 5*receivers || d.Delivered != d.Expected || d.Lost != 0 || d.Duplicated != 0 {
		t.Fatalf("delivery %+v: want %d receivers welcomed and 5 broadcasts delivered to each once", *d, receivers)
	}
	if rep.Latency.Count != d.Delivered || rep.Latency.Max <= 0 {
		t.Errorf("latency %+v: want one sample per delivery", rep.Latency)
	}
	if d.LoginConcurrency != concurrency || lc.max.Load() > concurrency || lc.max.Load() < 1 {
		t.Errorf("logins in flight at most %d (reported %d), want 1 to %d", lc.max.Load(), d.LoginConcurrency, concurrency)
	}
	if d.RampUp <= 0 {
		t.Errorf("no login time reported")
	}
	if runtime.GOOS == "linux" && (d.FileLimit < uint64(d.FilesNeeded) || d.FilesNeeded < receivers) {
		t.Errorf("open files: limit %d, needed %d; want the limit reported and at least %d needed", d.FileLimit, d.FilesNeeded, receivers)
	}
}

// TestScenarioFanoutOnLoops: a few hundred receivers of each fan-out scenario read their
// streams on the event loops (on Linux) and every one receives every broadcast once. Both ends
// are in this process: 300 receivers need about 600 open files, under the 1024 of a CI runner.
func TestScenarioFanoutOnLoops(t *testing.T) {
	target := newChat(t, chatserver.Options{MaxConnsPerAddr: -1})
	for _, scenario := range []string{ScenarioSSEFanout, ScenarioWSFanout} {
		t.Run(scenario, func(t *testing.T) {
			const receivers, messages = 300, 3
			before := streamsOnLoops.Load()
			rep, err := RunScenario(context.Background(), ScenarioOptions{Scenario: scenario, Target: target,
				Receivers: receivers, Messages: messages, Drain: time.Minute, LoginTime: 5 * time.Minute, MaxTime: 10 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			d := rep.Delivery
			if d.Welcomed != receivers || d.Expected != messages*receivers || d.Delivered != d.Expected || d.Lost != 0 || d.Duplicated != 0 {
				t.Fatalf("delivery %+v: want %d receivers welcomed and %d broadcasts delivered to each once", *d, receivers, messages)
			}
			if rep.Latency.Count != d.Delivered {
				t.Errorf("latency %+v: want one sample per delivery", rep.Latency)
			}
			if on := streamsOnLoops.Load() - before; streamLoopsSupported && on < receivers {
				t.Errorf("%d streams read on the event loops, want at least %d", on, receivers)
			}
		})
	}
}

// TestScenarioSlowLogin: a server that never welcomes anyone gives a report, within the login
// time, that says how many were welcomed, and nothing is sent.
func TestScenarioSlowLogin(t *testing.T) {
	var sends atomic.Int64
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			sends.Add(1)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	done := make(chan struct{})
	var rep *Report
	var err error
	go func() {
		defer close(done)
		rep, err = RunScenario(context.Background(), ScenarioOptions{Scenario: ScenarioSSEFanout, Target: srv.URL + "/",
			Receivers: 20, LoginConcurrency: 5, Messages: 3, LoginTime: 300 * time.Millisecond})
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("no report a minute after a login time of 300ms")
	}
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Delivery
	if d.Welcomed != 0 || d.Receivers != 20 || d.Sent != 0 || sends.Load() != 0 || d.LoginTime != 300*time.Millisecond {
		t.Errorf("delivery %+v, %d sends: want 0 of 20 welcomed within 300ms and nothing sent", *d, sends.Load())
	}
	if len(rep.Notes) == 0 || !strings.Contains(strings.Join(rep.Notes, " "), "only 0 of 20") {
		t.Errorf("notes %q: want one saying how many were welcomed", rep.Notes)
	}
}

// TestScenarioFileLimit: a hard limit on open files too low for the receivers is an error
// that names the limit and ulimit -n; a sufficient one leaves the soft limit at the hard one.
func TestScenarioFileLimit(t *testing.T) {
	_, err := RunScenario(context.Background(), ScenarioOptions{Scenario: ScenarioSSEFanout, Target: "http://127.0.0.1:1/",
		Receivers: 500, Messages: 1, FileLimit: 256})
	if err == nil || !strings.Contains(err.Error(), "ulimit -n") || !strings.Contains(err.Error(), "256") {
		t.Fatalf("error %v: want one naming the limit 256 and ulimit -n", err)
	}
	l, err := raiseFileLimit(10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && (l.cur != l.max || l.max == 0) {
		t.Errorf("limit %+v: want the soft limit raised to the hard one", l)
	}
}
