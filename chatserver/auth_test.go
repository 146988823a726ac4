package chatserver

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wasmgap/wasmgap/chatserver/internal/auth"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef-test")

func mint(t *testing.T, nick string, ttl time.Duration) string {
	t.Helper()
	tok, err := MintToken(testSecret, nick, ttl, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// sseLogin opens GET /<nick> with header and query; it returns the answer's
// status and, for a 200, a client reading the stream.
func (ts *testServer) sseLogin(t *testing.T, nick, query string, header http.Header) (int, string, http.Header, *client) {
	t.Helper()
	u := ts.url + "/" + nick
	if query != "" {
		u += "?" + query
	}
	req, _ := http.NewRequest("GET", u, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, strings.TrimSpace(string(b)), resp.Header, nil
	}
	c := &client{t: t, ts: ts, nick: nick, kind: "sse", events: make(chan ev, 1000),
		comments: make(chan string, 100), done: make(chan struct{}), errs: make(chan string, 10)}
	c.closeFn = func() { resp.Body.Close() }
	go func() {
		defer close(c.done)
		readSSE(resp.Body, c.events, c.comments)
	}()
	t.Cleanup(c.close)
	return 200, "", resp.Header, c
}

// wsLogin dials /ws?nick=<nick>&<query> offering protocols.
func (ts *testServer) wsLogin(t *testing.T, nick, query string, protocols []string) (*websocket.Conn, int, string) {
	t.Helper()
	u := "ws" + strings.TrimPrefix(ts.url, "http") + "/ws?nick=" + url.QueryEscape(nick)
	if query != "" {
		u += "&" + query
	}
	d := *websocket.DefaultDialer
	d.Subprotocols = protocols
	ws, resp, err := d.Dial(u, nil)
	if err != nil {
		if resp == nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		return nil, resp.StatusCode, strings.TrimSpace(string(b))
	}
	t.Cleanup(func() { ws.Close() })
	return ws, 101, ""
}

// request sends method path with header and returns status and body.
func (ts *testServer) send(t *testing.T, method, path, body string, header http.Header) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.url+path, strings.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func bearer(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

// TestTokenAuth is the reproduction of issue 21's second login as bob,
// his replayed history, his drained mailbox and sends as him: with
// AuthSecret each needs bob's token, and another's token is refused with
// 403 saying whose it is.
func TestTokenAuth(t *testing.T) {
	for _, fast := range []bool{false, true} {
		name := "handler"
		if fast {
			name = "Serve" // GET /msg/ goes through pageListener's fast path
		}
		t.Run(name, func(t *testing.T) {
			o := Options{AuthSecret: testSecret, LeaveGrace: -1}
			var ts *testServer
			if fast {
				ts, _ = serveOn(t, o)
			} else {
				ts = startServer(t, o)
			}
			bob, alice, mallory := mint(t, "bob", time.Hour), mint(t, "alice", time.Hour), mint(t, "mallory", time.Hour)

			// A message waits in offline bob's mailbox.
			if status, body := ts.send(t, "POST", "/send", `{"from":"alice","to":"bob","text":"for bob only"}`, bearer(alice)); status != 200 {
				t.Fatalf("alice's send: %d %s", status, body)
			}
			for _, tc := range []struct {
				name   string
				query  string
				header http.Header
				status int
				says   string
			}{
				{"no token", "", nil, 401, "needs a connection token"},
				{"mallory's token", "token=" + mallory, nil, 403, "token is mallory's"},
				{"mallory's token, replay", "", http.Header{"Authorization": {"Bearer " + mallory}, "Last-Event-Id": {"0"}}, 403, "token is mallory's"},
				{"mallory's cookie", "", http.Header{"Cookie": {auth.TokenCookie + "=" + mallory}}, 403, "token is mallory's"},
				{"garbage", "token=abc.def.ghi", nil, 401, "not a JWT"},
				{"expired", "token=" + expiredToken(t, "bob"), nil, 401, "expired"},
				{"other secret", "token=" + otherSecretToken(t, "bob"), nil, 401, "signature"},
				{"alg none", "token=" + noneToken("bob"), nil, 401, "not a JWT signed with HS256"},
			} {
				status, body, h, _ := ts.sseLogin(t, "bob", tc.query, tc.header)
				if status != tc.status || !strings.Contains(body, tc.says) {
					t.Errorf("SSE login as bob, %s: %d %q, want %d saying %q", tc.name, status, body, tc.status, tc.says)
				}
				if status == 401 && h.Get("WWW-Authenticate") == "" {
					t.Errorf("%s: 401 without WWW-Authenticate", tc.name)
				}
			}
			if _, status, body := ts.wsLogin(t, "bob", "token="+mallory, nil); status != 403 || !strings.Contains(body, "mallory's") {
				t.Errorf("WebSocket login as bob with mallory's token: %d %q, want 403", status, body)
			}
			if _, status, _ := ts.wsLogin(t, "bob", "", nil); status != 401 {
				t.Errorf("WebSocket login as bob without a token: %d, want 401", status)
			}
			// Sends as bob: refused without bob's token, on every route.
			for _, tc := range []struct {
				method, path, body string
				header             http.Header
				status             int
			}{
				{"GET", "/msg/bob/alice%20forged", "", nil, 401},
				{"GET", "/msg/bob/alice%20forged", "", bearer(mallory), 403},
				{"GET", "/msg/bob/alice%20forged?token=" + mallory, "", nil, 403},
				{"POST", "/send", `{"from":"bob","to":"alice","text":"forged"}`, nil, 401},
				{"POST", "/send", `{"from":"bob","to":"alice","text":"forged"}`, bearer(mallory), 403},
			} {
				if status, body := ts.send(t, tc.method, tc.path, tc.body, tc.header); status != tc.status {
					t.Errorf("%s %s as bob: %d %q, want %d", tc.method, tc.path, status, body, tc.status)
				}
			}

			// Bob with his own token: his mail, then his sends.
			_, _, _, c := ts.sseLogin(t, "bob", "token="+bob, nil)
			if c == nil {
				t.Fatal("bob's login with his token was refused")
			}
			c.expect("Welcome bob!", "now online: ")
			c.expectOffline("alice", "for bob only")
			ws, status, body := ts.wsLogin(t, "alice", "", []string{auth.WSProtocol, auth.TokenProtocol + alice})
			if ws == nil {
				t.Fatalf("alice's WebSocket login with the token as subprotocol: %d %s", status, body)
			}
			if ws.Subprotocol() != auth.WSProtocol {
				t.Errorf("selected subprotocol %q, want %q", ws.Subprotocol(), auth.WSProtocol)
			}
			c.expect("alice has joined.")
			for _, h := range []struct {
				method, path, body string
				header             http.Header
			}{
				{"GET", "/msg/bob/alice%20by%20bearer", "", bearer(bob)},
				{"GET", "/msg/bob/alice%20by%20query?token=" + bob, "", nil},
				{"POST", "/send", `{"from":"bob","to":"alice","text":"by cookie"}`, http.Header{"Cookie": {auth.TokenCookie + "=" + bob}}},
			} {
				if status, body := ts.send(t, h.method, h.path, h.body, h.header); status != 200 {
					t.Fatalf("bob's own send %s %s: %d %s", h.method, h.path, status, body)
				}
			}
			c.expect("You to alice: by bearer", "You to alice: by query", "You to alice: by cookie")
			// A WebSocket sends as its token's nick: alice's frames are alice's.
			if err := ws.WriteJSON(map[string]string{"to": "bob", "text": "over ws"}); err != nil {
				t.Fatal(err)
			}
			c.expect("alice: over ws")
		})
	}
}

func expiredToken(t *testing.T, nick string) string {
	tok, err := MintToken(testSecret, nick, time.Minute, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func otherSecretToken(t *testing.T, nick string) string {
	tok, err := MintToken([]byte("another secret of at least 32 bytes!!"), nick, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// noneToken is an unsigned JWT ("alg":"none") naming nick.
func noneToken(nick string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
		enc([]byte(`{"sub":"`+nick+`","exp":9999999999}`)) + "."
}

func TestMintTokenRefuses(t *testing.T) {
	for _, tc := range []struct {
		secret []byte
		nick   string
		ttl    time.Duration
		says   string
	}{
		{[]byte("short"), "bob", time.Hour, "at least 32"},
		{testSecret, "all", time.Hour, "reserved"},
		{testSecret, "bob", 0, "positive duration"},
		{testSecret, "bob", 400 * 24 * time.Hour, "at most"},
	} {
		if _, err := MintToken(tc.secret, tc.nick, tc.ttl, time.Now()); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("MintToken(%q, %q, %v) = %v, want an error saying %q", tc.secret, tc.nick, tc.ttl, err, tc.says)
		}
	}
	if _, err := New(Options{AuthSecret: []byte("short")}); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("New with a short secret: %v", err)
	}
	if _, err := New(Options{AuthSecret: testSecret, ClaimNicks: true}); err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("New with tokens and claims: %v", err)
	}
}

// TestNickClaims: in an open chat with ClaimNicks, the first login of a
// nickname gets a secret that later logins and sends must show.
func TestNickClaims(t *testing.T) {
	ts, _ := serveOn(t, Options{ClaimNicks: true, LeaveGrace: time.Hour})
	status, body, h, first := ts.sseLogin(t, "bob", "", nil)
	if status != 200 {
		t.Fatalf("first login: %d %s", status, body)
	}
	secret := h.Get(auth.ClaimHeader)
	cookie := h.Get("Set-Cookie")
	if secret == "" || !strings.HasPrefix(cookie, auth.ClaimCookie("bob")+"="+secret) || !strings.Contains(cookie, "HttpOnly") {
		t.Fatalf("first login's claim: %s %q, Set-Cookie %q", auth.ClaimHeader, secret, cookie)
	}
	first.expect("Welcome bob!", "now online: ")

	// A second login as bob: refused without the secret, welcome with it.
	for _, hd := range []http.Header{nil, {auth.ClaimHeader: {"wrong"}}, {"Cookie": {auth.ClaimCookie("bob") + "=wrong"}}} {
		if status, body, _, _ := ts.sseLogin(t, "bob", "", hd); status != 403 || !strings.Contains(body, "claimed") {
			t.Errorf("second login as bob showing %v: %d %q, want 403", hd, status, body)
		}
	}
	if _, status, body := ts.wsLogin(t, "bob", "", nil); status != 403 {
		t.Errorf("WebSocket login as bob without the secret: %d %q, want 403", status, body)
	}
	for _, hd := range []http.Header{{auth.ClaimHeader: {secret}}, {"Cookie": {auth.ClaimCookie("bob") + "=" + secret}}} {
		status, body, h, c := ts.sseLogin(t, "bob", "", hd)
		if status != 200 {
			t.Fatalf("login as bob showing the secret %v: %d %s", hd, status, body)
		}
		if h.Get(auth.ClaimHeader) != "" {
			t.Errorf("a login that showed the claim got a new one")
		}
		c.expect("Welcome bob!", "now online: bob")
		c.close()
	}
	if _, status, body := ts.wsLogin(t, "bob", "claim="+url.QueryEscape(secret), nil); status != 101 {
		t.Errorf("WebSocket login as bob with ?claim=: %d %s", status, body)
	}

	// Sends as bob need the secret (the fast path hands them to net/http);
	// sends as a nickname nobody claimed stay open, as in the article.
	for _, tc := range []struct {
		path   string
		header http.Header
		status int
	}{
		{"/msg/bob/all%20forged", nil, 403},
		{"/msg/bob/all%20forged", http.Header{auth.ClaimHeader: {"wrong"}}, 403},
		{"/msg/bob/all%20mine", http.Header{auth.ClaimHeader: {secret}}, 200},
		{"/msg/mary/all%20open", nil, 200},
	} {
		if status, body := ts.send(t, "GET", tc.path, "", tc.header); status != tc.status {
			t.Errorf("GET %s %v: %d %q, want %d", tc.path, tc.header, status, body, tc.status)
		}
	}
	first.expect("bob to all: mine", "mary to all: open")

	// The claim outlives the stream by the grace: still bob's.
	first.close()
	ts.waitStreams(t, "bob", 1) // the WebSocket
	if status, _, _, _ := ts.sseLogin(t, "bob", "", nil); status != 403 {
		t.Errorf("login as bob within the claim's grace: %d, want 403", status)
	}
}

// TestNickClaimEnds: a claim ends with its hold (the retention, short
// here, and no grace): the next login takes the nickname with a new secret.
func TestNickClaimEnds(t *testing.T) {
	ts := startServer(t, Options{ClaimNicks: true, LeaveGrace: -1, Retention: 200 * time.Millisecond})
	_, _, h, c := ts.sseLogin(t, "bob", "", nil)
	old := h.Get(auth.ClaimHeader)
	c.expect("Welcome bob!", "now online: ")
	c.close()
	ts.waitStreams(t, "bob", -1)
	deadline := time.Now().Add(waitFor)
	for {
		status, body, h, c := ts.sseLogin(t, "bob", "", nil)
		if status == 200 {
			if s := h.Get(auth.ClaimHeader); s == "" || s == old {
				t.Errorf("a new claim's secret %q (the old one %q)", s, old)
			}
			c.expect("Welcome bob!", "now online: ")
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob's claim never ended: %d %s", status, body)
		}
		time.Sleep(10 * time.Millisecond) // the stream's release follows its close
	}
}

// TestSSELoginCrossSite: a page of another site cannot log its visitor in
// (issue 21, item 10), as it cannot send for them.
func TestSSELoginCrossSite(t *testing.T) {
	ts := startServer(t, Options{})
	for _, site := range []string{"cross-site", "same-site"} {
		status, body, _, _ := ts.sseLogin(t, "bob", "", http.Header{"Sec-Fetch-Site": {site}})
		if status != 403 || !strings.Contains(body, "cross-site login refused") {
			t.Errorf("login with Sec-Fetch-Site %s: %d %q, want 403", site, status, body)
		}
	}
	for _, site := range []string{"same-origin", "none"} {
		if status, body, _, c := ts.sseLogin(t, "bob", "", http.Header{"Sec-Fetch-Site": {site}}); status != 200 {
			t.Errorf("login with Sec-Fetch-Site %s: %d %q", site, status, body)
		} else {
			c.close()
		}
	}
}

// TestNickClaimProtectsThePast: past the leave grace, a claimed nickname's
// history and waiting mail still go to its claim's holder alone: another
// login as it (resuming from 0, to read the history) is refused while they
// are kept.
func TestNickClaimProtectsThePast(t *testing.T) {
	ts := startServer(t, Options{ClaimNicks: true, LeaveGrace: 50 * time.Millisecond, Retention: time.Hour})
	status, body, h, bob := ts.sseLogin(t, "bob", "", nil)
	if status != 200 {
		t.Fatalf("bob's first login: %d %s", status, body)
	}
	secret := h.Get(auth.ClaimHeader)
	bob.expect("Welcome bob!", "now online: ")
	if status, body := ts.send(t, "GET", "/msg/bob/x%20a secret of bob", "", http.Header{auth.ClaimHeader: {secret}}); status != 200 {
		t.Fatalf("bob's send: %d %s", status, body)
	}
	bob.close()
	ts.waitStreams(t, "bob", -1) // past the grace: bob left
	ts.msg(t, "mary", "bob", "mail for bob")
	if status, body, _, c := ts.sseLogin(t, "bob", "last_event_id=0", nil); status != 403 {
		if c != nil {
			c.close()
		}
		t.Fatalf("another login as bob after his grace, resuming from 0: %d %q, want 403 while his history and mail are kept", status, body)
	}
	status, body, _, again := ts.sseLogin(t, "bob", "last_event_id=0", http.Header{auth.ClaimHeader: {secret}})
	if status != 200 {
		t.Fatalf("bob again with his claim: %d %s", status, body)
	}
	again.expect("You to x (offline): a secret of bob")
	again.close()
}
