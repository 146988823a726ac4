package load

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// A protocol is what differs between the kinds of server a chat scenario measures: how a
// receiver logs in over each transport and resumes, how its WebSocket frames read, and how a
// message is sent. The receivers, their event loops and parsers, the pacing and the
// measurement are the same for every kind. chatProtocol speaks to the chat; the Centrifugo
// one is in centrifugo.go.
type protocol interface {
	// sse is the request URI of nick's SSE stream at base, and the event id it resumes
	// after, sent as Last-Event-ID (0: none).
	sse(base *url.URL, nick string, lastID uint64) (uri string, resume uint64)
	// ws is the URL of nick's WebSocket at base, resuming after lastID where the server can,
	// and the message the receiver sends first (nil: none).
	ws(base *url.URL, nick string, lastID uint64) (u url.URL, hello []byte)
	// frame hands on one WebSocket message b of s's stream, or one longer than maxFrame
	// (tooLong, b unread): its events to onEvent, its answers (to pings) through reply. An
	// error ends the stream.
	frame(s *subscriber, b []byte, tooLong bool, onEvent func(event), reply func(opcode byte, payload []byte) error) error
	// publish sends text from nick from to nick to ("all": everyone) through the server at
	// base, and returns the answer's status and size.
	publish(ctx context.Context, client *http.Client, base *url.URL, body *bytes.Buffer, buf []byte, from, to, text string) (int, int64, error)
}

// serverKind is a kind of server a chat scenario can measure (ScenarioOptions.Server).
type serverKind struct {
	name string
	// protocol checks the options for this kind of server and returns its protocol.
	protocol func(o *ScenarioOptions) (protocol, error)
}

// serverKinds are the servers the scenarios speak to, the default first.
var serverKinds = []serverKind{{ServerWasmgap, newChatProtocol}, centrifugoServer}

// protocol is the protocol of the options' server, or what is wrong with the options for it.
func (o *ScenarioOptions) protocol() (protocol, error) {
	name := cmp.Or(o.Server, serverKinds[0].name)
	var names []string
	for _, k := range serverKinds {
		if k.name == name {
			return k.protocol(o)
		}
		names = append(names, k.name)
	}
	return nil, fmt.Errorf("server %q: allowed %s", o.Server, strings.Join(names, " or "))
}

// wsURL is the WebSocket URL of path elem under base.
func wsURL(base *url.URL, elem ...string) url.URL {
	u := *base.JoinPath(elem...)
	if u.Scheme == "https" {
		u.Scheme = "wss"
	} else {
		u.Scheme = "ws"
	}
	return u
}

// chatProtocol is the chat's: GET /<nick> for SSE (resumed with Last-Event-ID), /ws?nick=
// for WebSocket (resumed with ?resume=), frames of JSON events with ids, and a send by POST
// /send or the source article's GET /msg/<from>/<to>%20<text> (sendVia "get").
type chatProtocol struct{ sendVia string }

func newChatProtocol(o *ScenarioOptions) (protocol, error) {
	if o.SendVia != "" && o.SendVia != "post" && o.SendVia != "get" {
		return nil, fmt.Errorf("send-via %q: allowed post (POST /send) or get (GET /msg/<from>/<to>%%20<text>)", o.SendVia)
	}
	return chatProtocol{o.SendVia}, nil
}

func (chatProtocol) sse(base *url.URL, nick string, lastID uint64) (string, uint64) {
	return base.JoinPath(url.PathEscape(nick)).RequestURI(), lastID
}

func (chatProtocol) ws(base *url.URL, nick string, lastID uint64) (url.URL, []byte) {
	u := wsURL(base, "ws")
	q := url.Values{"nick": {nick}}
	if lastID > 0 {
		q.Set("resume", strconv.FormatUint(lastID, 10))
	}
	u.RawQuery = q.Encode()
	return u, nil
}

// wsMessage is a chat frame: an event, or an error the server reports.
type wsMessage struct {
	ID    uint64 `json:"id"`
	Text  string `json:"text"`
	Error string `json:"error"`
}

// frame decodes only frames that carry the run's token; the others give their id, read in
// place. An error the server reports without an event is not one.
func (chatProtocol) frame(s *subscriber, b []byte, tooLong bool, onEvent func(event), _ func(byte, []byte) error) error {
	if tooLong {
		// The online list or another notice, never a run's message.
		onEvent(event{id: s.lastID})
		return nil
	}
	if !bytes.Contains(b, s.t.token) {
		// A notice: only its id matters (to resume from), read without decoding.
		if id, ok := frameID(b); ok && id > 0 {
			s.lastID = id
		} else if bytes.Contains(b, []byte(`"error"`)) && !bytes.Contains(b, []byte(`"text"`)) {
			return nil
		}
		onEvent(event{id: s.lastID})
		return nil
	}
	var msg wsMessage
	if err := json.Unmarshal(b, &msg); err != nil {
		return fmt.Errorf("WebSocket frame %q: %w", truncate(b), err)
	}
	if msg.Error != "" && msg.Text == "" {
		return nil
	}
	if msg.ID > 0 {
		s.lastID = msg.ID
	}
	onEvent(event{id: msg.ID, text: msg.Text})
	return nil
}

// frameID reads the "id" field of a chat frame ({"id":123,…}) without decoding the rest.
func frameID(b []byte) (uint64, bool) {
	i := bytes.Index(b, []byte(`"id":`))
	if i < 0 {
		return 0, false
	}
	b = bytes.TrimLeft(b[i+5:], " ")
	j := 0
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	return parseUint(b[:j])
}

func (p chatProtocol) publish(ctx context.Context, client *http.Client, base *url.URL, body *bytes.Buffer, buf []byte, from, to, text string) (int, int64, error) {
	var req *http.Request
	var err error
	if p.sendVia == "get" {
		u := base.String() + "msg/" + url.PathEscape(from) + "/" + url.PathEscape(to+" "+text)
		req, err = http.NewRequestWithContext(ctx, "GET", u, nil)
	} else {
		body.Reset()
		json.NewEncoder(body).Encode(map[string]string{"from": from, "to": to, "text": text})
		req, err = http.NewRequestWithContext(ctx, "POST", base.JoinPath("send").String(), bytes.NewReader(body.Bytes()))
		if req != nil {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	if err != nil {
		return 0, 0, fmt.Errorf("build send request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.CopyBuffer(io.Discard, resp.Body, buf)
	return resp.StatusCode, n, err
}
