package chatserver

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func TestValidNick(t *testing.T) {
	for _, tc := range []struct {
		nick string
		ok   bool
	}{
		{"john", true}, {"J.o-h_n9", true}, {strings.Repeat("a", 32), true},
		{"", false}, {strings.Repeat("a", 33), false}, {"jo hn", false}, {"jöhn", false},
		{"<b>", false}, {"a/b", false}, {"all", false}, {"msg", false}, {"ws", false},
		{"send", false}, {".", false}, {"..", false},
		// Reserved in any case (issue 21, item 17).
		{"All", false}, {"ALL", false}, {"Msg", false}, {"WS", false}, {"Send", false}, {"allx", true}, {"Mary", true},
	} {
		err := ValidNick(tc.nick)
		if (err == nil) != tc.ok {
			t.Errorf("ValidNick(%q) = %v, want ok=%v", tc.nick, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "letters, digits") {
			t.Errorf("ValidNick(%q) = %q: the error should say what is allowed", tc.nick, err)
		}
	}
}

// TestBadRequests: every bad input gets a clear error and the right status.
func TestBadRequests(t *testing.T) {
	ts := startServer(t, Options{MaxMessageBytes: 16, MaxMailbox: 1})
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		says                     string
	}{
		{"page", "GET", "/", "", 200, "<!doctype html>"},
		{"page head", "HEAD", "/", "", 200, ""},
		{"page post", "POST", "/", "", 405, "use GET or HEAD"},
		{"unknown path", "GET", "/favicon.ico", "", 404, "log in with GET ./<nick>"},
		{"deep path", "GET", "/a/b", "", 404, "not found"},
		{"send ok", "POST", "/send", `{"from":"mary","to":"all","text":"hi"}`, 200, `{"ok":true}`},
		{"send get", "GET", "/send", "", 405, "use POST"},
		{"send not json", "POST", "/send", `from=mary`, 400, `{\"from\":\"<nick>\"`},
		{"send unknown field", "POST", "/send", `{"from":"mary","to":"all","text":"hi","x":1}`, 400, `unknown field`},
		{"send time field", "POST", "/send", `{"from":"mary","to":"all","text":"hi","time":"2020-01-01T00:00:00Z"}`, 400, `unknown field \"time\"`},
		{"send bad from", "POST", "/send", `{"from":"ma ry","to":"all","text":"hi"}`, 400, "from: nickname"},
		{"send from all", "POST", "/send", `{"from":"all","to":"bob","text":"hi"}`, 400, "reserved"},
		{"send bad to", "POST", "/send", `{"from":"mary","to":"","text":"hi"}`, 400, `or \"all\" for everyone`},
		{"send empty", "POST", "/send", `{"from":"mary","to":"all","text":""}`, 400, "empty"},
		{"send too long", "POST", "/send", `{"from":"mary","to":"all","text":"12345678901234567"}`, 413, "at most 16 are allowed"},
		{"send newline", "POST", "/send", `{"from":"mary","to":"all","text":"a\nb"}`, 400, "one line"},
		{"msg bad utf8", "GET", "/msg/mary/all%20%FF", "", 400, "UTF-8"},
		{"send huge body", "POST", "/send", `{"from":"mary","to":"all","text":"` + strings.Repeat("a", 5000) + `"}`, 413, "too large"},
		{"msg ok", "GET", "/msg/mary/all%20hi", "", 200, "ok"},
		{"msg no space", "GET", "/msg/mary/john", "", 400, "no space"},
		{"msg no target", "GET", "/msg/mary", "", 400, "expected /msg/<from>/<to>%20<text>"},
		{"msg empty text", "GET", "/msg/mary/john%20", "", 400, "empty"},
		{"msg slash in text", "GET", "/msg/mary/all%20a/b", "", 200, "ok"},
		{"offline kept", "GET", "/msg/mary/nobody%20one", "", 200, "ok"},
		{"mailbox full", "GET", "/msg/mary/nobody%20two", "", 409, "already has 1 messages waiting"},
		{"ws not upgrade", "GET", "/ws?nick=john", "", 400, "WebSocket client"},
		{"ws bad nick", "GET", "/ws?nick=", "", 400, "nickname is empty"},
		{"ws bad resume", "GET", "/ws?nick=john&resume=x", "", 400, "decimal id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := ts.do(t, tc.method, tc.path, tc.body)
			if status != tc.status || !strings.Contains(body, tc.says) {
				t.Errorf("%s %s: %d %q, want %d containing %q", tc.method, tc.path, status, body, tc.status, tc.says)
			}
		})
	}
}

func TestBadLogins(t *testing.T) {
	ts := startServer(t, Options{})
	for _, tc := range []struct {
		path, last string
		status     int
		says       string
	}{
		{"/jo%20hn", "", 400, "has the character ' '"},
		{"/msg", "", 400, "reserved"},
		{"/all", "", 400, "reserved"},
		{"/" + strings.Repeat("a", 33), "", 400, "33 characters"},
		{"/john", "abc", 400, "Last-Event-ID"},
		{"/john?last_event_id=-1", "", 400, "decimal id"},
	} {
		req, _ := http.NewRequest("GET", ts.url+tc.path, nil)
		req.Header.Set("Accept", "text/event-stream")
		if tc.last != "" {
			req.Header.Set("Last-Event-ID", tc.last)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 512)
		n, _ := resp.Body.Read(b)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b[:n]), tc.says) {
			t.Errorf("GET %s: %d %q, want %d containing %q", tc.path, resp.StatusCode, b[:n], tc.status, tc.says)
		}
	}
}

func TestSendRateLimit(t *testing.T) {
	ts := startServer(t, Options{SendRate: 1, SendBurst: 2})
	for i := range 2 {
		if status, body := ts.msg(t, "mary", "all", "hi"); status != 200 {
			t.Fatalf("send %d within the burst: %d %s", i, status, body)
		}
	}
	status, body := ts.post(t, "mary", "all", "hi")
	if status != 429 || !strings.Contains(body, "mary is sending too fast (at most 1 messages per second per nickname, bursts of 2)") {
		t.Fatalf("third send: %d %s", status, body)
	}
	// Another nickname has its own bucket.
	if status, body := ts.post(t, "john", "all", "hi"); status != 200 {
		t.Fatalf("john: %d %s", status, body)
	}
	// Over WebSocket the error comes as a frame.
	c := ts.login(t, "ws", "mary")
	c.expect("Welcome mary!", "now online: ")
	c.send("all", "too fast")
	select {
	case e := <-c.errs:
		if !strings.Contains(e, "sending too fast") {
			t.Errorf("ws error %q", e)
		}
	case <-time.After(waitFor):
		t.Fatal("no error frame")
	}
}

func TestConnsPerAddr(t *testing.T) {
	ts := startServer(t, Options{MaxConnsPerAddr: 2})
	a := ts.login(t, "sse", "a")
	ts.login(t, "ws", "b")
	req, _ := http.NewRequest("GET", ts.url+"/c", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 512)
	n, _ := resp.Body.Read(b)
	resp.Body.Close()
	if resp.StatusCode != 429 || !strings.Contains(string(b[:n]), "at most 2 per address") {
		t.Fatalf("third stream: %d %s", resp.StatusCode, b[:n])
	}
	_, wresp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.url, "http")+"/ws?nick=c", nil)
	if err == nil || wresp == nil || wresp.StatusCode != 429 {
		t.Fatalf("third stream over ws: %v", err)
	}
	// A closed stream frees its place.
	a.close()
	ts.waitStreams(t, "a", -1)
	ts.login(t, "sse", "c").expect("Welcome c!")
}

func TestWebSocketOrigin(t *testing.T) {
	ts := startServer(t, Options{AllowedOrigins: []string{"https://friend.example"}})
	u := "ws" + strings.TrimPrefix(ts.url, "http") + "/ws?nick=john"
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"", true}, {ts.url, true}, {"https://friend.example", true},
		{"https://evil.example", false}, {"null", false},
	} {
		h := http.Header{}
		if tc.origin != "" {
			h.Set("Origin", tc.origin)
		}
		ws, resp, err := websocket.DefaultDialer.Dial(u, h)
		if tc.ok {
			if err != nil {
				t.Errorf("origin %q refused: %v", tc.origin, err)
				continue
			}
			ws.Close()
			continue
		}
		if err == nil {
			ws.Close()
			t.Errorf("origin %q accepted", tc.origin)
		} else if resp == nil || resp.StatusCode != 403 {
			t.Errorf("origin %q: %v, want 403", tc.origin, err)
		}
	}
}

func TestWebSocketBadFrames(t *testing.T) {
	ts := startServer(t, Options{MaxMessageBytes: 32})
	c := ts.login(t, "ws", "john")
	c.expect("Welcome john!", "now online: ")
	for _, tc := range []struct {
		kind int
		data string
		says string
	}{
		{websocket.TextMessage, `not json`, `frame is not the JSON {"to"`},
		{websocket.TextMessage, `{"to":"all","text":"hi","from":"mary"}`, `unknown field "from"`},
		{websocket.TextMessage, `{"to":"b c","text":"hi"}`, "to: nickname"},
		{websocket.TextMessage, `{"to":"all","text":""}`, "empty"},
		{websocket.BinaryMessage, `{"to":"all","text":"hi"}`, "send text frames"},
	} {
		c.ws.WriteMessage(tc.kind, []byte(tc.data))
		select {
		case e := <-c.errs:
			if !strings.Contains(e, tc.says) {
				t.Errorf("frame %q: error %q, want it to contain %q", tc.data, e, tc.says)
			}
		case <-time.After(waitFor):
			t.Fatalf("frame %q: no error", tc.data)
		}
	}
	// A valid frame still works after errors.
	c.send("all", "fine")
	c.expect("john to all: fine")
	// A frame far over the limit closes the connection with the reason.
	c.ws.WriteMessage(websocket.TextMessage, []byte(`{"to":"all","text":"`+strings.Repeat("a", 2000)+`"}`))
	select {
	case <-c.done:
	case <-time.After(waitFor):
		t.Fatal("an oversized frame did not close the connection")
	}
}

// TestStoreInUse: a second server on the same data folder is refused with
// the reason (bbolt holds a lock on the file).
func TestStoreInUse(t *testing.T) {
	dir := t.TempDir()
	startServer(t, Options{DataDir: dir})
	_, err := New(Options{DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("second server on %s: %v", dir, err)
	}
	file := t.TempDir() + "/file"
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{DataDir: file}); err == nil || !strings.Contains(err.Error(), "chat store folder") {
		t.Fatalf("data folder that is a file: %v", err)
	}
}
