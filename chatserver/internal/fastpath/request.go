package fastpath

import (
	"bytes"

	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// MaxRequest is the longest request head answered here: a longer one (a
// browser's, with many cookies) goes to net/http.
const MaxRequest = 4096

// Verdict is what ParseRequest makes of a connection's next bytes.
type Verdict int

const (
	NeedMore Verdict = iota // the head is not complete yet
	Serve                   // a plain request for the page: App.Page answers it
	HandOff                 // anything else: net/http's
	Send                    // a plain GET /msg/...: App.Send sends it, unless the post is refused
)

// Request is a request answered here, as ParseRequest read it.
type Request struct {
	Length     int    // bytes of the request (its head: it has no body)
	Head       bool   // HEAD: the answer's head only
	Form       Form   // the answer's status line and Connection header
	CloseAfter bool   // the connection ends after the answer
	Target     []byte // a send's request target (/msg/...), in the bytes parsed
	Remote     string // a send's peer address (host:port), set by the listener
	// A page request's Accept-Encoding and If-None-Match values, as
	// net/http's Header holds them.
	AcceptEncoding, IfNoneMatch []string
}

// ParseRequest reads the request at the start of b. It answers Serve only
// for what it reads completely and the way net/http would (GET or HEAD of
// exactly "/", HTTP/1.0 or 1.1, one Host that hosts allows, no body,
// well-formed fields), Send for a GET of a /msg/ target that is its own
// escaped path (isMsgTarget) with the same conditions and no
// Sec-Fetch-Site (the handler's cross-site check is net/http's), and
// HandOff for anything else, however valid: net/http then answers it, or
// refuses it with the right error.
func ParseRequest(b []byte, hosts *httpguard.Hosts) (Request, Verdict) {
	var req Request
	lineEnd := bytes.Index(b, []byte("\r\n"))
	if lineEnd < 0 {
		if len(b) < MaxRequest && (mayStart(b, "GET /") || mayStart(b, "HEAD /")) {
			return req, NeedMore
		}
		return req, HandOff
	}
	method, rest, _ := bytes.Cut(b[:lineEnd], []byte(" "))
	target, version, _ := bytes.Cut(rest, []byte(" "))
	if string(version) != "HTTP/1.0" && string(version) != "HTTP/1.1" {
		return req, HandOff
	}
	minor := version[len(version)-1]
	sends := false
	switch {
	case string(target) == "/" && (string(method) == "GET" || string(method) == "HEAD"):
		req.Head = string(method) == "HEAD"
	case string(method) == "GET" && isMsgTarget(target):
		req.Target, sends = target, true
	default:
		return req, HandOff
	}
	endOfHead := bytes.Index(b, []byte("\r\n\r\n"))
	if endOfHead < 0 {
		if len(b) >= MaxRequest {
			return req, HandOff
		}
		return req, NeedMore
	}
	req.Length = endOfHead + 4
	fields := b[bytes.IndexByte(b, '\n')+1 : endOfHead+2]
	var host []byte
	var hasHost, wantsClose, wantsKeepAlive bool
	for len(fields) > 0 {
		i := bytes.Index(fields, []byte("\r\n"))
		line := fields[:i]
		fields = fields[i+2:]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !isToken(line[:colon]) {
			return req, HandOff // folded, empty or malformed name
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		if !isFieldValue(value) {
			return req, HandOff
		}
		switch {
		case equalFold(name, "host"):
			if hasHost || !isHostValue(value) {
				return req, HandOff
			}
			host, hasHost = value, true
		case equalFold(name, "connection"):
			for tok := range bytes.SplitSeq(value, []byte(",")) {
				switch tok = bytes.Trim(tok, " \t"); {
				case equalFold(tok, "close"):
					wantsClose = true
				case equalFold(tok, "keep-alive"):
					wantsKeepAlive = true
				case len(tok) == 0:
				default:
					return req, HandOff // upgrade, a hop-by-hop field...
				}
			}
		case equalFold(name, "accept-encoding"):
			req.AcceptEncoding = append(req.AcceptEncoding, string(value))
		case equalFold(name, "if-none-match"):
			req.IfNoneMatch = append(req.IfNoneMatch, string(value))
		case equalFold(name, "content-length"):
			if string(value) != "0" {
				return req, HandOff
			}
		case equalFold(name, "transfer-encoding"), equalFold(name, "upgrade"), equalFold(name, "expect"):
			return req, HandOff
		case sends && equalFold(name, "sec-fetch-site"):
			return req, HandOff // a browser's send: net/http checks where it came from
		}
	}
	if wantsClose && wantsKeepAlive {
		return req, HandOff // net/http's answer says one and does the other
	}
	if !hasHost || !hosts.Allowed(string(host)) {
		return req, HandOff // net/http's 400, or the Host check's 403
	}
	switch {
	case minor == '1' && wantsClose:
		req.Form, req.CloseAfter = Form11Close, true
	case minor == '1':
		req.Form = Form11KeepAlive
	case wantsKeepAlive:
		req.Form = Form10KeepAlive
	default:
		req.Form, req.CloseAfter = Form10Close, true
	}
	if sends {
		return req, Send
	}
	return req, Serve
}

// mayStart reports whether b is the start of a request line beginning with
// prefix (or a shorter part of prefix).
func mayStart(b []byte, prefix string) bool {
	if len(b) <= len(prefix) {
		return string(b) == prefix[:len(b)]
	}
	return string(b[:len(prefix)]) == prefix
}

// isMsgTarget reports whether target is /msg/... written with unreserved
// characters, slashes and well-formed %-escapes only: net/http's
// EscapedPath of it is then target itself, and it has no query.
func isMsgTarget(target []byte) bool {
	rest, ok := bytes.CutPrefix(target, []byte("/msg/"))
	if !ok {
		return false
	}
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '/':
		case c == '%' && i+2 < len(rest) && isHex(rest[i+1]) && isHex(rest[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isToken reports whether b is an HTTP token (a field name).
func isToken(b []byte) bool {
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0) {
			return false
		}
	}
	return true
}

// isFieldValue reports whether b holds no control character but tab.
func isFieldValue(b []byte) bool {
	for _, c := range b {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// isHostValue reports whether b can be a Host of the page: a name or an
// address, with a port.
func isHostValue(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '-' || c == '_' || c == ':' || c == '[' || c == ']') {
			return false
		}
	}
	return true
}

// equalFold compares ASCII b with lower-case s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
