package chatserver

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// request sends one request with the given headers and returns its status and body.
func (ts *testServer) request(t *testing.T, method, path, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestCrossSiteSends is the reproduction of a page of another origin posting
// text/plain in no-cors mode: the send routes take only what a browser sends
// for the chat's own page (JSON, same origin) or a tool sends (no
// Sec-Fetch-Site), and nothing refused is delivered.
func TestCrossSiteSends(t *testing.T) {
	ts := startServer(t, Options{})
	john := ts.login(t, "sse", "john")
	john.expect("Welcome john!", "now online: ")
	body := `{"from":"mallory","to":"john","text":"sent cross-origin"}`
	for _, tc := range []struct {
		name         string
		method, path string
		body         string
		header       map[string]string
		status       int
		says         string
	}{
		{"text/plain", "POST", "/send", body, map[string]string{"Content-Type": "text/plain"}, 415, "application/json"},
		{"no content type", "POST", "/send", body, nil, 415, "application/json"},
		{"form", "POST", "/send", "from=mallory", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "application/json"},
		{"cross-origin JSON", "POST", "/send", body, map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, 403, "cross-origin"},
		{"cross-origin POST /msg", "POST", "/msg/mallory/john%20x", "", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, 403, "cross-origin"},
		{"cross-site GET /msg", "GET", "/msg/mallory/john%20x", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "cross-site send refused"},
		{"same-site GET /msg", "GET", "/msg/mallory/john%20x", "", map[string]string{"Sec-Fetch-Site": "same-site"}, 403, "cross-site send refused"},
	} {
		if status, got := ts.request(t, tc.method, tc.path, tc.body, tc.header); status != tc.status || !strings.Contains(got, tc.says) {
			t.Errorf("%s: %d %q, want %d saying %q", tc.name, status, got, tc.status, tc.says)
		}
	}
	// What the chat's page, curl and ab send still works.
	for _, tc := range []struct {
		method, path, body string
		header             map[string]string
		text               string
	}{
		{"POST", "/send", `{"from":"mary","to":"john","text":"page"}`, map[string]string{"Content-Type": "application/json; charset=utf-8", "Sec-Fetch-Site": "same-origin", "Origin": ts.url}, "mary: page"},
		{"GET", "/msg/mary/john%20curl", "", nil, "mary: curl"},
		{"GET", "/msg/mary/john%20typed", "", map[string]string{"Sec-Fetch-Site": "none"}, "mary: typed"},
		{"GET", "/msg/mary/john%20own", "", map[string]string{"Sec-Fetch-Site": "same-origin"}, "mary: own"},
	} {
		if status, got := ts.request(t, tc.method, tc.path, tc.body, tc.header); status != 200 {
			t.Fatalf("%s %s: %d %s", tc.method, tc.path, status, got)
		}
		john.expect(tc.text) // and nothing refused came before it
	}
}

// TestRepeatedQueryRefused: a query parameter given twice is refused with
// 400 naming it, never read as its first value (issue 49, item 8): a
// login whose claim, token or resume point is ambiguous does not go on.
func TestRepeatedQueryRefused(t *testing.T) {
	ts := startServer(t, Options{ClaimNicks: true})
	for _, tc := range []struct{ query, param string }{
		{"claim=a&claim=b", "claim"},
		{"last_event_id=0&x=1&last_event_id=5", "last_event_id"},
	} {
		status, body, _, c := ts.sseLogin(t, "bob", tc.query, nil)
		if c != nil {
			c.close()
		}
		if status != 400 || !strings.Contains(body, `"`+tc.param+`"`) || !strings.Contains(body, "once") {
			t.Errorf("GET /bob?%s: %d %q, want 400 naming %s", tc.query, status, body, tc.param)
		}
	}
	if _, status, body := ts.wsLogin(t, "bob", "nick=eve", nil); status != 400 || !strings.Contains(body, `"nick"`) {
		t.Errorf("GET /ws?nick=bob&nick=eve: %d %q, want 400 naming nick", status, body)
	}
}
