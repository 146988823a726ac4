// Package httpguard holds the checks every wasmgap server puts in front of its routes, so
// that a page on another site can neither reach them through the user's browser nor
// through a DNS name rebound to this machine:
//
//   - Hosts refuses a request whose Host header names a host the server does not serve.
//     A server bound to loopback answers only to loopback names (localhost, 127.0.0.1,
//     [::1]) and the names it was told to allow, which defeats DNS rebinding: a page of
//     evil.example whose name later resolves to 127.0.0.1 still sends
//     "Host: evil.example".
//   - CrossOrigin refuses unsafe-method requests that a browser marks as cross-origin
//     (net/http's CrossOriginProtection, which reads Sec-Fetch-Site and Origin).
//   - RequireJSON lets a state-changing route accept only application/json bodies, a
//     content type that a cross-site form or a no-cors fetch cannot send without a CORS
//     preflight.
//   - PageCSP is the Content-Security-Policy of a self-contained page: its own inline
//     script, by hash, and nothing else.
//   - CrossSite tells a safe-method route (such as the chat's GET /msg/) that a browser
//     sent it on behalf of another site.
//   - RepeatedQuery refuses a query parameter given more than once, which a route would
//     otherwise read as its first value while a proxy or a log reads another.
package httpguard

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// Hosts is the set of Host header values a server answers to. Build it with NewHosts.
type Hosts struct {
	listen   string
	loopback bool            // the server is bound to a loopback address
	names    map[string]bool // allowed names beyond the loopback ones, lower case
	suffixes []string        // allowed "*.example.com" patterns, as ".example.com"
}

// NewHosts returns the host policy of a server listening on listenAddr (host:port, as
// given to net.Listen) that also serves the names in allow. An entry of allow is a host
// name or IP address, with or without a port (the port is not compared), or a pattern
// "*.example.com" for every name under example.com.
//
// A server bound to a loopback address answers to loopback names and addresses and to
// allow. A server bound to another address (a wildcard such as :8080 or 0.0.0.0:8080, or
// a network address) is reached by names this process cannot know: it answers to every
// host unless allow is given, and then to loopback names, IP addresses and allow. An IP
// address in the Host header cannot be rebound, so it never needs allowing there.
func NewHosts(listenAddr string, allow []string) *Hosts {
	h := &Hosts{listen: listenAddr, names: map[string]bool{}}
	host, _, err := net.SplitHostPort(listenAddr)
	if err != nil {
		host = listenAddr
	}
	h.loopback = isLoopbackName(normalize(host))
	for _, a := range allow {
		a = normalize(stripPort(a))
		if a == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(a, "*."); ok {
			h.suffixes = append(h.suffixes, "."+rest)
			continue
		}
		h.names[a] = true
	}
	return h
}

// CheckHostName says whether s can be an entry of NewHosts's allow list, for flag
// parsing: a host name, an IP address or a "*.name" pattern, with an optional port.
func CheckHostName(s string) error {
	h := normalize(stripPort(s))
	h = strings.TrimPrefix(h, "*.")
	if h == "" {
		return fmt.Errorf("allowed host %q is empty: give a host name such as chat.example.com, an IP address, or *.example.com", s)
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return nil
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("allowed host %q is not a host name: labels are 1 to 63 characters separated by dots", s)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("allowed host %q is not a host name: it may hold letters, digits, '-', '_' and '.' only", s)
			}
		}
	}
	return nil
}

// Allowed reports whether a request with this Host header value may be served.
func (h *Hosts) Allowed(hostHeader string) bool {
	name := normalize(stripPort(hostHeader))
	if name == "" {
		return false
	}
	if isLoopbackName(name) || h.names[name] {
		return true
	}
	for _, s := range h.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	if h.loopback {
		return false
	}
	if len(h.names) == 0 && len(h.suffixes) == 0 {
		return true
	}
	_, err := netip.ParseAddr(name)
	return err == nil
}

// Handler serves next for the requests whose Host is allowed and answers the others
// with 403 and a message that says what is served and how to allow more.
func (h *Hosts) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.Allowed(r.Host) {
			http.Error(w, h.refusal(r.Host), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refusal says why a Host was refused.
func (h *Hosts) refusal(host string) string {
	served := "localhost, 127.0.0.1, [::1]"
	for _, n := range slices.Sorted(maps.Keys(h.names)) {
		served += ", " + n
	}
	for _, s := range h.suffixes {
		served += ", *" + s
	}
	if !h.loopback {
		served += " and IP addresses"
	}
	return fmt.Sprintf("host %q is not served here: this server (listening on %s) answers to %s; "+
		"start it with --allow-host %s to serve that name", host, h.listen, served, normalize(stripPort(host)))
}

// stripPort removes a trailing :port (digits) from a host, and the brackets of an IPv6
// literal.
func stripPort(s string) string {
	if host, port, err := net.SplitHostPort(s); err == nil && port != "" && strings.Trim(port, "0123456789") == "" {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
}

// normalize lower-cases a host name and drops a trailing dot (example.com. is example.com).
func normalize(s string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".")
}

// isLoopbackName reports whether name (normalized, no port) always means this machine:
// localhost, a name under .localhost (RFC 6761; browsers resolve them to loopback
// themselves), or a loopback IP address.
func isLoopbackName(name string) bool {
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	addr, err := netip.ParseAddr(name)
	return err == nil && addr.Unmap().IsLoopback()
}

// ContentTypeError is returned by RequireJSON for a body that is not declared as JSON.
type ContentTypeError struct {
	// Got is the Content-Type header the request sent, "" when it sent none.
	Got string
}

func (e *ContentTypeError) Error() string {
	if e.Got == "" {
		return "the request has no Content-Type: send the body as application/json"
	}
	return fmt.Sprintf("Content-Type must be application/json, got %q", e.Got)
}

// StatusCode is the HTTP status that answers the error: 415 Unsupported Media Type.
func (e *ContentTypeError) StatusCode() int { return http.StatusUnsupportedMediaType }

// RequireJSON returns nil when the request declares an application/json body (any
// parameters, such as charset, allowed) and a *ContentTypeError otherwise.
func RequireJSON(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return &ContentTypeError{Got: ct}
	}
	return nil
}

// CrossSite reports whether a browser marked the request as sent for another site
// (Sec-Fetch-Site: cross-site or same-site). Requests from tools such as curl, ab and
// wrk send no such header and are not cross-site.
func CrossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return true
	}
	return false
}

// OriginAllowed reports whether a WebSocket may connect from a page of origin to a
// server reached as host: a client that is not a browser (no Origin), a page of the
// server's own host, or one of allowed ("*": any).
func OriginAllowed(origin, host string, allowed []string) bool {
	if origin == "" {
		return true // not a browser
	}
	for _, o := range allowed {
		if o == "*" || strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, host)
}

// CrossOrigin serves next for every safe-method request (GET, HEAD, OPTIONS) and for the
// unsafe ones a browser sent from this server's own origin, and answers the other
// unsafe-method browser requests with 403 and the reason. Requests without the browser's
// Sec-Fetch-Site and Origin headers (curl, the load generator) are served.
func CrossOrigin(next http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, fmt.Sprintf("cross-origin request refused: %s %s was sent by a page of another origin "+
			"(Sec-Fetch-Site %q, Origin %q); use this server's own page or a client that is not a browser",
			r.Method, r.URL.Path, r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Origin")), http.StatusForbidden)
	}))
	return p.Handler(next)
}

// PageCSP is the Content-Security-Policy of a self-contained page (one HTML file whose
// script and style are inline, every URL relative, as the chat's and the load panel's
// pages are): it runs the page's one inline <script> alone, allowed by its SHA-256, so an
// injected inline handler would not run even if some text ever reached the DOM as HTML;
// and it lets the page talk to its own server only. A page without a script gets
// script-src 'none'.
func PageCSP(page []byte) string {
	script := "'none'"
	if start := bytes.Index(page, []byte("<script>")); start >= 0 {
		start += len("<script>")
		if end := bytes.Index(page[start:], []byte("</script>")); end >= 0 {
			sum := sha256.Sum256(page[start : start+end])
			script = "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		}
	}
	return "default-src 'none'; script-src " + script +
		"; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
}

// MaxHeaderBytes is the http.Server.MaxHeaderBytes of every wasmgap server: net/http
// reads 4 KiB beyond it before it refuses a request head with 431, so a request line and
// header fields of 16 KiB in all are the limit that holds (docs/SECURITY.md).
const MaxHeaderBytes = 16<<10 - 4096

// RepeatedQuery says which query parameter of r is given more than once (the first such
// in r's query, by name), as a *RepeatedParamError, or nil when each is given once.
func RepeatedQuery(r *http.Request) error {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil // a malformed query is the route's to refuse
	}
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if v := q[k]; len(v) > 1 {
			return &RepeatedParamError{Param: k, Values: v}
		}
	}
	return nil
}

// RepeatedParamError is a query parameter given more than once: which value was meant
// cannot be told, and taking one would answer another question than the one asked.
type RepeatedParamError struct {
	Param  string
	Values []string
}

func (e *RepeatedParamError) Error() string {
	return fmt.Sprintf("the query parameter %q is given %d times (%q): give each parameter once", e.Param, len(e.Values), e.Values)
}
