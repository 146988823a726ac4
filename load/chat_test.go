package load

import (
	"context"
	"fmt"
	"net/http/httptest"
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
		s.receive(sh, nil, msg(s, k))
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
	s.receive(sh, nil, msg(s, 0))
	s.receive(sh, nil, msg(s, 0)) // a duplicate does not count
	s.receive(sh, nil, msg(s, 2))
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
