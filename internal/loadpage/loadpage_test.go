package loadpage

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver"
)

// pageServer serves hello at /, the chat under /chat/ and the load page under /load/, with the
// page configured with the server's own address.
func pageServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	chat, err := chatserver.New(chatserver.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chat.Shutdown(t.Context()) })
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello, load\n") })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) { time.Sleep(20 * time.Millisecond) })
	mux.Handle("/chat/", http.StripPrefix("/chat", chat.Handler()))
	mux.Handle("/load/", http.StripPrefix("/load", Handler(Options{BaseURL: srv.URL})))
	return srv
}

// postRun posts a run and returns the status and the stream's events.
func postRun(t *testing.T, url, body string) (int, []StreamEvent, string) {
	t.Helper()
	resp, err := http.Post(url+"/load/run", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, nil, string(b)
	}
	var events []StreamEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev StreamEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("stream line %q: %v", sc.Text(), err)
		}
		events = append(events, ev)
	}
	return 200, events, ""
}

func TestHandlerRuns(t *testing.T) {
	srv := pageServer(t)
	tests := []struct {
		name string
		body string
		sent int64
	}{
		{"http closed", `{"path":"/","c":4,"n":300}`, 300},
		{"http open, HTTP/1.0 without keep-alive", `{"path":"/","c":2,"n":50,"rate":500,"http10":true,"no_keepalive":true}`, 50},
		{"chat-send", `{"scenario":"chat-send","c":2,"n":40,"receivers":3}`, 40},
		{"ws-fanout", `{"scenario":"ws-fanout","n":10,"rate":100,"receivers":5}`, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, events, msg := postRun(t, srv.URL, tc.body)
			if code != 200 {
				t.Fatalf("status %d: %s", code, msg)
			}
			last := events[len(events)-1]
			if last.Type != "report" || last.Report == nil {
				t.Fatalf("last event %+v, want the report", last)
			}
			if last.Report.Sent != tc.sent || last.Report.Sent != last.Report.OK+last.Report.ErrorCount() {
				t.Errorf("sent %d ok %d errors %d, want %d sent", last.Report.Sent, last.Report.OK, last.Report.ErrorCount(), tc.sent)
			}
			if d := last.Report.Delivery; d != nil && (d.Lost != 0 || d.Delivered != d.Expected) {
				t.Errorf("delivery %+v", *d)
			}
			if events[0].Type != "progress" {
				t.Errorf("first event %+v, want progress", events[0])
			}
			if len(last.Report.Histogram) == 0 {
				t.Error("no histogram for the chart")
			}
		})
	}
}

func TestHandlerRefuses(t *testing.T) {
	srv := pageServer(t)
	tests := []struct {
		name, body string
		code       int
		want       string
	}{
		{"other host", `{"path":"http://example.org/","n":1}`, 400, "other hosts"},
		{"scheme-relative", `{"path":"//example.org/","n":1}`, 400, "other hosts"},
		{"userinfo trick", `{"path":"@example.org/","n":1}`, 400, "starting with one /"},
		{"unbounded", `{"path":"/"}`, 400, "bounded"},
		{"too many requests", `{"path":"/","n":1000000}`, 400, "at most"},
		{"too long", `{"path":"/","d":3600}`, 400, "at most"},
		{"too many connections", `{"path":"/","n":100,"c":100000}`, 400, "at most"},
		{"bad method", `{"path":"/","n":1,"method":"DELETE"}`, 400, "GET, HEAD or POST"},
		{"unknown field", `{"path":"/","n":1,"target":"http://example.org/"}`, 400, "unknown field"},
		{"unknown scenario", `{"scenario":"flood","n":1}`, 400, "scenario"},
		{"duration past every clock", `{"path":"/","d":1e300}`, 400, "at most"},
		{"duration too short to run", `{"path":"/","d":1e-12}`, 400, "too short"},
		{"two objects", `{"path":"/","n":1}{"path":"/","n":1}`, 400, "exactly one object"},
		{"empty body", ``, 400, "empty"},
		{"not JSON", `path=/&n=1`, 400, "JSON object"},
		{"wrong type", `{"path":"/","n":"many"}`, 400, "JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, msg := postRun(t, srv.URL, tc.body)
			if code != tc.code || !strings.Contains(msg, tc.want) {
				t.Errorf("status %d %q, want %d mentioning %q", code, msg, tc.code, tc.want)
			}
		})
	}
	// A form post or a text/plain no-cors fetch (no JSON content type) is refused, and says
	// what is allowed.
	for _, ct := range []string{"text/plain", "application/jsonp"} {
		resp, err := http.Post(srv.URL+"/load/run", ct, strings.NewReader(`{"path":"/","n":1}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(string(b), "application/json") {
			t.Errorf("%s post: status %d %q, want 415 naming application/json", ct, resp.StatusCode, b)
		}
	}
	resp, err := http.Post(srv.URL+"/load/run", "application/x-www-form-urlencoded", strings.NewReader(`{"path":"/","n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("form post: status %d, want 415", resp.StatusCode)
	}
	// A page of another site cannot start a run, even with a JSON body (a CORS-safelisted
	// no-cors fetch cannot send one, but the check does not rest on that alone).
	for _, hd := range []http.Header{
		{"Sec-Fetch-Site": {"cross-site"}},
		{"Origin": {"http://evil.example"}},
	} {
		req, _ := http.NewRequest("POST", srv.URL+"/load/run", strings.NewReader(`{"path":"/","n":1}`))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hd {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "cross-origin") {
			t.Errorf("cross-origin post with %v: status %d %q, want 403", hd, resp.StatusCode, b)
		}
	}
	// Without its own address, the page runs nothing.
	h := httptest.NewServer(Handler(Options{}))
	defer h.Close()
	resp, err = http.Post(h.URL+"/run", "application/json", strings.NewReader(`{"path":"/","n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("unconfigured: status %d, want 503", resp.StatusCode)
	}
}

func TestHandlerOneRunAtATime(t *testing.T) {
	srv := pageServer(t)
	// The first run may last the page's longest (10 s): closing its stream below ends it, so
	// the second request finds it running however slowly this machine serves it.
	resp, err := http.Post(srv.URL+"/load/run", "application/json", strings.NewReader(`{"path":"/slow","c":1,"d":10}`))
	if err != nil {
		t.Fatal(err)
	}
	// The first progress line proves the first run holds the server's one slot.
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	code, _, msg := postRun(t, srv.URL, `{"path":"/","n":1}`)
	if code != http.StatusConflict {
		t.Errorf("second run: status %d %q, want 409", code, msg)
	}
	resp.Body.Close()
	// The page is free again once the first run has seen its client go. Each try is a run
	// of one request; the loop is bounded.
	for i := 0; ; i++ {
		code, _, msg = postRun(t, srv.URL, `{"path":"/","n":1}`)
		if code == 200 {
			break
		}
		if code != http.StatusConflict || i == 300 {
			t.Fatalf("after the first run's client left: status %d %q", code, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestHandlerPage(t *testing.T) {
	srv := pageServer(t)
	for path, want := range map[string]string{"/load/": "<canvas", "/load/limits": `"max_requests":20000`} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %d, body lacks %q", path, resp.StatusCode, want)
		}
	}
}

func TestPageCSP(t *testing.T) {
	srv := pageServer(t)
	resp, err := http.Get(srv.URL + "/load/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	script := body[bytes.Index(body, []byte("<script>"))+len("<script>") : bytes.Index(body, []byte("</script>"))]
	sum := sha256.Sum256(script)
	want := "script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	if !strings.Contains(csp, want) {
		t.Errorf("CSP %q lacks the page script's hash (%s)", csp, want)
	}
	for _, part := range strings.Split(csp, ";") {
		if strings.HasPrefix(strings.TrimSpace(part), "script-src") && strings.Contains(part, "unsafe-inline") {
			t.Errorf("CSP %q lets any inline script run", csp)
		}
	}
	if bytes.Count(body, []byte("<script")) != 1 {
		t.Error("the page has more than one script: the CSP hashes only the first")
	}
}
