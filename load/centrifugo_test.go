package load

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/benchtool"
	"github.com/wasmgap/wasmgap/internal/gotool"
)

// TestCentrifugoToken: the connection token is an HS256 JWT whose signature checks with the
// secret and whose claims subscribe the user to the channel.
func TestCentrifugoToken(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tok := centrifugoToken("s3cret", "lt1r0", "chat", now)
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q: want three parts", tok)
	}
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if got := base64.RawURLEncoding.EncodeToString(mac.Sum(nil)); got != parts[2] {
		t.Errorf("signature %s, want %s", parts[2], got)
	}
	var head map[string]string
	var claims struct {
		Sub      string   `json:"sub"`
		Channels []string `json:"channels"`
		Exp      int64    `json:"exp"`
	}
	for i, v := range []any{&head, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	if head["alg"] != "HS256" || claims.Sub != "lt1r0" || len(claims.Channels) != 1 || claims.Channels[0] != "chat" || claims.Exp != now.Add(24*time.Hour).Unix() {
		t.Errorf("head %v, claims %+v", head, claims)
	}
}

// TestCentrifugoFrame: each newline-separated reply of a frame is one event; the run's
// publications carry their text, so that receive finds the token and the number; the
// server's ping is answered; a refused connect ends the stream.
func TestCentrifugoFrame(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:8000/")
	cf := centrifugoProtocol{CentrifugoOptions{APIKey: "k", TokenSecret: "s"}}
	s := &subscriber{t: newStreamTarget(base, cf, "lt-ab12-"), nick: "r0"}
	var events []event
	var replies []string
	onEvent := func(ev event) { events = append(events, ev) }
	reply := func(op byte, p []byte) error {
		if op != wsText {
			t.Errorf("reply opcode %d, want a text frame", op)
		}
		replies = append(replies, string(p))
		return nil
	}
	frame := `{"id":1,"connect":{"client":"c1","version":"6.9.1","subs":{"chat":{}},"ping":25,"pong":true}}` + "\n" +
		`{"push":{"channel":"chat","pub":{"data":{"text":"lt-ab12-7"},"offset":1}}}` + "\n" +
		`{"push":{"channel":"chat","pub":{"data":{"text":"lt-ab12-8"},"offset":2}}}`
	if err := cf.frame(s, []byte(frame), false, onEvent, reply); err != nil {
		t.Fatal(err)
	}
	if len(events) != 3 || events[0].text != "" || !strings.Contains(events[1].text, "lt-ab12-7") || !strings.Contains(events[2].text, "lt-ab12-8") {
		t.Errorf("events %+v: want the connect's bare event, then messages 7 and 8", events)
	}
	if err := cf.frame(s, []byte("{}"), false, onEvent, reply); err != nil || len(replies) != 1 || replies[0] != "{}" {
		t.Errorf("ping: err %v, replies %q: want one {}", err, replies)
	}
	err := cf.frame(s, []byte(`{"id":1,"error":{"code":109,"message":"token expired"}}`), false, onEvent, reply)
	if err == nil || !strings.Contains(err.Error(), "token expired") {
		t.Errorf("refused connect: %v, want an error quoting it", err)
	}

	// receive reads the message number after the token in the raw reply.
	sc := newScenario(&ScenarioOptions{Scenario: ScenarioWSFanout, Target: base.String(), Receivers: 1, Messages: 10,
		Server: ServerCentrifugo, Centrifugo: CentrifugoOptions{APIKey: "k", TokenSecret: "s"}})
	sc.token = "lt-ab12-"
	sc.sendTimes[7].Store(time.Now().UnixNano())
	sc.expected.Store(1)
	var seen []uint64
	sc.receive(&sc.shards[0], &seen, nil, events[1])
	if sc.delivered.Load() != 1 || sc.deliveries[7].Load() != 1 {
		t.Errorf("delivered %d, message 7 seen %d times: want once", sc.delivered.Load(), sc.deliveries[7].Load())
	}
}

// TestCentrifugoOptionsRefused: a Centrifugo target without its keys, or in chat-send, is
// refused with what is missing.
func TestCentrifugoOptionsRefused(t *testing.T) {
	for _, c := range []struct {
		o    ScenarioOptions
		want string
	}{
		{ScenarioOptions{Scenario: ScenarioWSFanout, Server: ServerCentrifugo, Centrifugo: CentrifugoOptions{TokenSecret: "s"}}, "server API key"},
		{ScenarioOptions{Scenario: ScenarioSSEFanout, Server: ServerCentrifugo, Centrifugo: CentrifugoOptions{APIKey: "k"}}, "HMAC secret"},
		{ScenarioOptions{Scenario: ScenarioChatSend, Server: ServerCentrifugo, Centrifugo: CentrifugoOptions{APIKey: "k", TokenSecret: "s"}}, "only the fan-out and churn scenarios"},
		{ScenarioOptions{Scenario: ScenarioWSFanout, Server: "nats"}, "allowed wasmgap or centrifugo"},
	} {
		c.o.Target, c.o.Messages = "http://127.0.0.1:8000/", 1
		if err := c.o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error with %q", c.o, err, c.want)
		}
	}
}

// TestCentrifugoFanoutExactlyOnce runs both fan-out scenarios against a real Centrifugo
// (built into the tools' cache by `go run ./scripts/peer-tools centrifugo`; CI does):
// every receiver logs in, and every broadcast reaches every receiver exactly once; and churn
// over both transports: every login is answered.
func TestCentrifugoFanoutExactlyOnce(t *testing.T) {
	bin, ok := gotool.Centrifugo.Installed()
	if !ok {
		if os.Getenv("PEERS_REQUIRED") != "" {
			t.Fatalf("centrifugo %s is not in the tools' cache: go run ./scripts/peer-tools centrifugo", gotool.Centrifugo.Version)
		}
		t.Skipf("centrifugo %s is not in the tools' cache: go run ./scripts/peer-tools centrifugo builds it (about 4 min)", gotool.Centrifugo.Version)
	}
	dir := t.TempDir()
	addr, err := benchtool.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(addr)
	conf := fmt.Sprintf(`{"log":{"level":"error"},"http_server":{"address":%q,"port":%s},
"client":{"token":{"hmac_secret_key":"test-secret-test-secret-test-secret"}},
"http_api":{"key":"test-key"},"uni_sse":{"enabled":true},"health":{"enabled":true}}`, host, port)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config", filepath.Join(dir, "config.json"))
	var logb strings.Builder
	cmd.Stdout, cmd.Stderr = &logb, &logb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cancel()
	waitHTTP(t, "http://"+addr+"/health", &logb)

	for _, sc := range []string{ScenarioWSFanout, ScenarioSSEFanout} {
		t.Run(sc, func(t *testing.T) {
			rep, err := RunScenario(ctx, ScenarioOptions{Scenario: sc, Target: "http://" + addr + "/", Receivers: 30, Messages: 5,
				Server: ServerCentrifugo, Centrifugo: CentrifugoOptions{APIKey: "test-key", TokenSecret: "test-secret-test-secret-test-secret"},
				MaxTime: time.Minute})
			if err != nil {
				t.Fatalf("%v\ncentrifugo's log: %s", err, logb.String())
			}
			d := rep.Delivery
			if d.Welcomed != 30 || d.Sent != 5 || d.Expected != 150 || d.Delivered != 150 || d.Lost != 0 || d.Duplicated != 0 {
				t.Errorf("welcomed %d, sent %d, expected %d, delivered %d, lost %d, duplicated %d: want 30, 5, 150, 150, 0, 0 (notes %q)",
					d.Welcomed, d.Sent, d.Expected, d.Delivered, d.Lost, d.Duplicated, rep.Notes)
			}
		})
	}
	for _, tr := range []string{"ws", "sse"} {
		t.Run("churn over "+tr, func(t *testing.T) {
			rep, err := RunScenario(ctx, ScenarioOptions{Scenario: ScenarioChurn, Transport: tr, Target: "http://" + addr + "/", Messages: 20, Rate: 200,
				Server: ServerCentrifugo, Centrifugo: CentrifugoOptions{APIKey: "test-key", TokenSecret: "test-secret-test-secret-test-secret"},
				MaxTime: time.Minute})
			if err != nil {
				t.Fatalf("%v\ncentrifugo's log: %s", err, logb.String())
			}
			if rep.Sent != 20 || rep.OK != 20 || rep.Latency.Count != 20 {
				t.Errorf("%d logins, %d answered, %d connect times: want 20 of each (errors %v)", rep.Sent, rep.OK, rep.Latency.Count, rep.ErrorExamples)
			}
		})
	}
}

// waitHTTP waits up to 15 s for u to answer 200.
func waitHTTP(t *testing.T, u string, log fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready within 15 s: %v; log: %s", u, err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLatencyJSONRoundTrip: a report's latencies read back from its JSON are what it had, to
// the microsecond the histograms hold.
func TestLatencyJSONRoundTrip(t *testing.T) {
	l := Latency{Count: 7, Min: 12 * time.Microsecond, Mean: 1500 * time.Microsecond, P50: time.Millisecond, P90: 2 * time.Millisecond,
		P99: 35 * time.Millisecond, P999: 120 * time.Millisecond, Max: 2 * time.Second}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var back Latency
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != l {
		t.Errorf("read back %+v from %s, want %+v", back, b, l)
	}
}
