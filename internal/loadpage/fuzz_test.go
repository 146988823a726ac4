package loadpage

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

// FuzzRunRequest posts arbitrary bodies through the page's decoding and checks. Each one is
// either refused with a clear error, or becomes a run that targets this server alone and stays
// inside every limit.
func FuzzRunRequest(f *testing.F) {
	for _, s := range []string{
		`{"path":"/","c":4,"n":300}`,
		`{"path":"/","c":2,"n":50,"rate":500,"http10":true,"no_keepalive":true}`,
		`{"scenario":"chat-send","c":2,"n":40,"receivers":3,"transport":"ws"}`,
		`{"scenario":"ws-fanout","n":10,"rate":100,"receivers":5}`,
		`{"path":"//example.org/","n":1}`,
		`{"path":"/","d":1e300}`,
		`{"path":"/","method":"post","body":"x","d":0.5}`,
	} {
		f.Add([]byte(s))
	}
	hd := &handler{limits: Limits{}.withDefaults(), opts: Options{ChatPath: "/chat/"},
		base: &url.URL{Scheme: "http", Host: "127.0.0.1:8080"}}
	l := hd.limits
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeRunRequest(bytes.NewReader(body))
		if err != nil {
			checkRefusal(t, err)
			return
		}
		p, err := hd.plan(req)
		if err != nil {
			checkRefusal(t, err)
			return
		}
		if (p.http == nil) == (p.chat == nil) {
			t.Fatalf("plan %+v: want exactly one of http and chat", p)
		}
		var target string
		var d, maxTime time.Duration
		var rate float64
		if o := p.http; o != nil {
			target, d, maxTime, rate = o.Request.URL, o.Duration, o.MaxTime, o.Rate
			if o.Requests > l.MaxRequests || o.Connections < 1 || o.Connections > l.MaxConnections || len(o.Request.Body) > maxBodyBytes {
				t.Fatalf("http run out of bounds: n %d c %d body %d", o.Requests, o.Connections, len(o.Request.Body))
			}
			if o.Requests == 0 && o.Duration <= 0 {
				t.Fatal("unbounded http run accepted")
			}
			if err := o.Validate(); err != nil {
				t.Fatalf("accepted options the generator refuses: %v", err)
			}
		} else {
			o := p.chat
			target, d, maxTime, rate = o.Target, o.Duration, o.MaxTime, o.Rate
			if o.Messages > l.MaxMessages || o.Receivers > l.MaxReceivers || o.Concurrency > l.MaxConnections || o.Senders > l.MaxConnections {
				t.Fatalf("chat run out of bounds: %+v", *o)
			}
			if o.Messages == 0 && o.Duration <= 0 {
				t.Fatal("unbounded chat run accepted")
			}
			if target != "http://127.0.0.1:8080/chat/" {
				t.Fatalf("chat target %q, want this server's chat", target)
			}
			if err := o.Validate(); err != nil {
				t.Fatalf("accepted options the generator refuses: %v", err)
			}
		}
		u, err := url.Parse(target)
		if err != nil || u.Scheme != "http" || u.Host != "127.0.0.1:8080" || u.User != nil || !strings.HasPrefix(target, "http://127.0.0.1:8080/") {
			t.Fatalf("target %q leaves this server", target)
		}
		if d < 0 || d > l.MaxDuration || rate < 0 || rate > l.MaxRate || maxTime <= 0 || maxTime > l.MaxDuration+runSlack {
			t.Fatalf("run out of bounds: duration %s rate %g max time %s", d, rate, maxTime)
		}
	})
}

// checkRefusal: a refused request says so, in words a person can act on.
func checkRefusal(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, errBadRun) || len(err.Error()) < len("bad run request: ")+10 {
		t.Fatalf("refusal %q: want a bad run request that says what was wrong", err)
	}
}
