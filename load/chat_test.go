package load

import (
	"context"
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
		{"ws-fanout bounded by time", ScenarioOptions{Scenario: ScenarioWSFanout, Receivers: 5, Duration: 200 * time.Millisecond, Rate: 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Target = target
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
