package load

import (
	"context"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver"
)

// TestChurnAgainstChat: churn logs in the count of users its pace gives for the duration, over
// each transport, each on a connection of its own that is closed on both sides; every login
// is welcomed and measured once.
func TestChurnAgainstChat(t *testing.T) {
	for _, tr := range []string{"ws", "sse"} {
		t.Run(tr, func(t *testing.T) {
			chat, err := chatserver.New(chatserver.Options{DataDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			srv, ln := newServer(t, chat.Handler())
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				chat.Shutdown(ctx)
			})
			const rate, d = 200, 150 * time.Millisecond
			want := ConstantPacer{rate}.Due(d)
			rep, err := RunScenario(context.Background(), ScenarioOptions{Scenario: ScenarioChurn, Target: srv.URL + "/",
				Transport: tr, Rate: rate, Duration: d, MaxTime: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Sent != want || rep.OK != want || rep.Latency.Count != want {
				t.Errorf("%d logins, %d welcomed, %d connect times: want %d of each (errors %v)", rep.Sent, rep.OK, rep.Latency.Count, want, rep.ErrorExamples)
			}
			// The server closes its side once it sees the logout: wait for it, within a bound.
			for deadline := time.Now().Add(30 * time.Second); ln.closes.Load() < ln.accepts.Load() && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if a, c := ln.accepts.Load(), ln.closes.Load(); a != want || c != a {
				t.Errorf("the server accepted %d connections and closed %d: want %d and all", a, c, want)
			}
		})
	}
}
