package chatserver

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wasmgap/wasmgap/chatserver/internal/room"
	"github.com/wasmgap/wasmgap/chatserver/internal/stream"
)

// The chat's parsers of network input, fuzzed: none may panic, and each
// keeps its promise about what it accepts. Seeds are in testdata/fuzz/.

// FuzzMsgPath: the article's send route /msg/<from>/<to>%20<text>.
func FuzzMsgPath(f *testing.F) {
	for _, s := range []string{"/msg/mary/john%20hello", "/msg/mary/all%20hi%20there", "/msg/a/b", "/msg/%zz/b%20c", "/msg//%20", "/msg/mary/john%20%0Aline", "/msg/x%2Fy/z%20t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		var p message
		var err error
		if p.From, p.To, p.Text, err = room.ParseMsgPath(path); err != nil {
			if !strings.Contains(err.Error(), "/msg/<from>/<to>%20<text>") {
				t.Fatalf("error %q does not show the allowed form", err)
			}
			return
		}
		if strings.Contains(p.To, " ") {
			t.Fatalf("receiver %q holds the space that ends it", p.To)
		}
		if err := validPost(p, 4096); err == nil {
			// An accepted post is one line of valid UTF-8 from valid nicknames.
			if !utf8.ValidString(p.Text) || strings.ContainsAny(p.Text, "\n\r") || ValidNick(p.From) != nil {
				t.Fatalf("accepted a bad post %+v", p)
			}
			stream.NewEvent(1, p.From+": "+p.Text)
		}
	})
}

// FuzzSendBody: the JSON body of POST /send.
func FuzzSendBody(f *testing.F) {
	for _, s := range []string{`{"from":"mary","to":"john","text":"hi"}`, `{"from":"mary","to":"all","text":"x"}`, `{"from":"a","to":"b","text":"c","x":1}`, `{"from":1}`, `{}{}`, `[]`, `{"text":"\u0000"}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var p message
		var err error
		if p.From, p.To, p.Text, err = room.DecodeSend(strings.NewReader(string(body))); err != nil {
			if !strings.Contains(err.Error(), `{"from":"<nick>","to":"<nick> or all","text":"<message>"}`) {
				t.Fatalf("error %q does not show the allowed form", err)
			}
			return
		}
		validPost(p, 4096)
	})
}

// FuzzFrame: a WebSocket client's text frame.
func FuzzFrame(f *testing.F) {
	for _, s := range []string{`{"to":"john","text":"hi"}`, `{"to":"all","text":"x"}`, `{"to":"a","text":"b","from":"c"}`, `{"to":1}`, `{"to":"a"} {"to":"b"}`, `null`, `"x"`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := stream.DecodeFrame(data)
		if err != nil {
			if !strings.Contains(err.Error(), `{"to":"<nick> or all","text":"<message>"}`) {
				t.Fatalf("error %q does not show the allowed form", err)
			}
			return
		}
		validPost(message{From: "sender", To: fr.To, Text: fr.Text}, 4096)
	})
}

// FuzzResumeID: Last-Event-ID, ?last_event_id= and resume=.
func FuzzResumeID(f *testing.F) {
	for _, s := range []string{"", "0", "42", "18446744073709551615", "18446744073709551616", "-1", "+1", "0x10", "1e3", " 5", "007"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		n, ok, err := resumeID(v)
		want, perr := strconv.ParseUint(v, 10, 64)
		switch {
		case v == "":
			if ok || err != nil {
				t.Fatalf("empty: %d %v %v, want none", n, ok, err)
			}
		case perr != nil:
			if err == nil || !strings.Contains(err.Error(), "decimal id") {
				t.Fatalf("%q accepted as %d or refused without the allowed form: %v", v, n, err)
			}
		default:
			if err != nil || !ok || n != want {
				t.Fatalf("%q: %d %v %v, want %d", v, n, ok, err, want)
			}
		}
	})
}
