package httpguard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHostsAllowed(t *testing.T) {
	tests := []struct {
		listen string
		allow  []string
		host   string
		want   bool
	}{
		// Bound to loopback: loopback names only, plus what is allowed.
		{"127.0.0.1:8080", nil, "127.0.0.1:8080", true},
		{"127.0.0.1:8080", nil, "localhost:8080", true},
		{"127.0.0.1:8080", nil, "LOCALHOST.:8080", true},
		{"127.0.0.1:8080", nil, "app.localhost", true},
		{"127.0.0.1:8080", nil, "[::1]:8080", true},
		{"127.0.0.1:8080", nil, "127.0.0.2", true},
		{"127.0.0.1:8080", nil, "evil.example:8080", false},
		{"127.0.0.1:8080", nil, "evil.example", false},
		{"127.0.0.1:8080", nil, "localhost.evil.example", false},
		{"127.0.0.1:8080", nil, "192.168.1.10:8080", false},
		{"127.0.0.1:8080", nil, "", false},
		{"localhost:8080", nil, "evil.example:8080", false},
		{"[::1]:8080", nil, "evil.example:8080", false},
		{"127.0.0.1:8080", []string{"chat.example.com"}, "chat.example.com:8080", true},
		{"127.0.0.1:8080", []string{"Chat.Example.com:443"}, "chat.example.com", true},
		{"127.0.0.1:8080", []string{"*.example.com"}, "a.b.example.com", true},
		{"127.0.0.1:8080", []string{"*.example.com"}, "example.com", false},
		{"127.0.0.1:8080", []string{"*.example.com"}, "badexample.com", false},
		// Bound to every address: any host, unless a list is given.
		{":8080", nil, "evil.example", true},
		{"0.0.0.0:8080", nil, "my-laptop.lan:8080", true},
		{"0.0.0.0:8080", []string{"chat.example.com"}, "evil.example", false},
		{"0.0.0.0:8080", []string{"chat.example.com"}, "192.168.1.10:8080", true},
		{"0.0.0.0:8080", []string{"chat.example.com"}, "chat.example.com", true},
	}
	for _, tt := range tests {
		got := NewHosts(tt.listen, tt.allow).Allowed(tt.host)
		if got != tt.want {
			t.Errorf("NewHosts(%q, %q).Allowed(%q) = %v, want %v", tt.listen, tt.allow, tt.host, got, tt.want)
		}
	}
}

func TestHostsHandler(t *testing.T) {
	h := NewHosts("127.0.0.1:18090", []string{"b.example", "a.example"}).Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "served")
	}))
	r := httptest.NewRequest("GET", "/eve", nil)
	r.Host = "evil.example:18090"
	r.Header.Set("Origin", "http://evil.example:18090")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Fatalf("rebound host: status %d, want 403", w.Code)
	}
	for _, want := range []string{`"evil.example:18090"`, "127.0.0.1:18090", "localhost", "a.example, b.example", "--allow-host evil.example"} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("refusal %q does not say %q", w.Body.String(), want)
		}
	}
	r.Host = "localhost:18090"
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK || w.Body.String() != "served" {
		t.Errorf("localhost: got %d %q, want 200 served", w.Code, w.Body.String())
	}
}

func TestCheckHostName(t *testing.T) {
	for _, ok := range []string{"chat.example.com", "chat.example.com:443", "*.example.com", "10.0.0.1", "[::1]:80", "my_host"} {
		if err := CheckHostName(ok); err != nil {
			t.Errorf("CheckHostName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", " ", "a b", "a..b", "http://x", "x/y", strings.Repeat("a", 64)} {
		if err := CheckHostName(bad); err == nil {
			t.Errorf("CheckHostName(%q) = nil, want an error", bad)
		}
	}
}

func TestRequireJSON(t *testing.T) {
	tests := []struct {
		ct   string
		want bool
	}{
		{"application/json", true},
		{"application/json; charset=utf-8", true},
		{"Application/JSON", true},
		{"text/plain", false},
		{"text/plain;charset=UTF-8", false},
		{"application/x-www-form-urlencoded", false},
		{"multipart/form-data; boundary=x", false},
		{"application/jsonx", false},
		{"", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("POST", "/send", strings.NewReader("{}"))
		if tt.ct != "" {
			r.Header.Set("Content-Type", tt.ct)
		}
		err := RequireJSON(r)
		if (err == nil) != tt.want {
			t.Errorf("RequireJSON(Content-Type %q) = %v, want ok=%v", tt.ct, err, tt.want)
		}
		if err != nil {
			if ce, ok := err.(*ContentTypeError); !ok || ce.StatusCode() != http.StatusUnsupportedMediaType || !strings.Contains(err.Error(), "application/json") {
				t.Errorf("RequireJSON(Content-Type %q) = %#v, want a ContentTypeError naming application/json with 415", tt.ct, err)
			}
		}
	}
}

func TestCrossSite(t *testing.T) {
	for site, want := range map[string]bool{"": false, "none": false, "same-origin": false, "same-site": true, "cross-site": true} {
		r := httptest.NewRequest("GET", "/msg/mallory/all%20hi", nil)
		if site != "" {
			r.Header.Set("Sec-Fetch-Site", site)
		}
		if got := CrossSite(r); got != want {
			t.Errorf("CrossSite(Sec-Fetch-Site %q) = %v, want %v", site, got, want)
		}
	}
}

func TestCrossOrigin(t *testing.T) {
	h := CrossOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "sent") }))
	tests := []struct {
		method, site, origin string
		want                 int
	}{
		{"POST", "cross-site", "https://evil.example", http.StatusForbidden},
		{"POST", "same-site", "http://a.localhost:8080", http.StatusForbidden},
		{"POST", "same-origin", "http://127.0.0.1:8080", http.StatusOK},
		{"POST", "", "", http.StatusOK}, // curl, ab, the load generator
		{"POST", "", "http://evil.example", http.StatusForbidden},
		{"GET", "cross-site", "https://evil.example", http.StatusOK},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, "http://127.0.0.1:8080/send", strings.NewReader("{}"))
		if tt.site != "" {
			r.Header.Set("Sec-Fetch-Site", tt.site)
		}
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.want {
			t.Errorf("%s Sec-Fetch-Site %q Origin %q: status %d, want %d (%s)", tt.method, tt.site, tt.origin, w.Code, tt.want, w.Body)
		}
		if w.Code == http.StatusForbidden && !strings.Contains(w.Body.String(), "cross-origin request refused") {
			t.Errorf("refusal %q does not say why", w.Body)
		}
	}
}

func TestPageCSP(t *testing.T) {
	page := []byte("<!doctype html><p>hi</p><script>alert(1)</script>")
	// sha256 of "alert(1)", base64.
	const want = "script-src 'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='"
	if csp := PageCSP(page); !strings.Contains(csp, want) || !strings.HasPrefix(csp, "default-src 'none'") {
		t.Errorf("PageCSP = %q, want it to contain %q", csp, want)
	}
	if csp := PageCSP([]byte("<p>no script</p>")); !strings.Contains(csp, "script-src 'none'") {
		t.Errorf("PageCSP of a page without a script = %q, want script-src 'none'", csp)
	}
}

func TestOriginAllowed(t *testing.T) {
	for _, tt := range []struct {
		origin, host string
		allowed      []string
		want         bool
	}{
		{"", "127.0.0.1:8080", nil, true},                      // not a browser
		{"http://127.0.0.1:8080", "127.0.0.1:8080", nil, true}, // its own page
		{"http://evil.example", "127.0.0.1:8080", nil, false},  // another site
		{"http://chat.example", "127.0.0.1:8080", []string{"http://chat.example/"}, true},
		{"HTTP://CHAT.EXAMPLE", "127.0.0.1:8080", []string{"http://chat.example"}, true},
		{"http://evil.example", "127.0.0.1:8080", []string{"http://chat.example"}, false},
		{"http://evil.example", "127.0.0.1:8080", []string{"*"}, true},
		{"::not a url", "127.0.0.1:8080", nil, false},
	} {
		if got := OriginAllowed(tt.origin, tt.host, tt.allowed); got != tt.want {
			t.Errorf("OriginAllowed(%q, %q, %q) = %v, want %v", tt.origin, tt.host, tt.allowed, got, tt.want)
		}
	}
}

func TestRepeatedQuery(t *testing.T) {
	for _, c := range []struct{ query, says string }{
		{"", ""},
		{"a=1&b=2", ""},
		{"b=1&a=2&b=3", `the query parameter "b" is given 2 times (["1" "3"])`},
		{"a&a", `"a" is given 2 times`},
	} {
		r := httptest.NewRequest("GET", "/?"+c.query, nil)
		err := RepeatedQuery(r)
		if c.says == "" && err != nil || c.says != "" && (err == nil || !strings.Contains(err.Error(), c.says)) {
			t.Errorf("RepeatedQuery(%q) = %v, want %q", c.query, err, c.says)
		}
	}
}
