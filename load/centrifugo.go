package load

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// The fan-out scenarios measure a Centrifugo server as they measure the chat, with the same
// receivers, event loops and histograms, so that one client measures both servers: only the
// login, the frames and the send differ.
//
//   - A receiver connects with a connection token (JWT, HS256) that this package mints with
//     the server's HMAC secret; its "channels" claim subscribes the connection to the
//     scenario's channel on the server's side, the same way over both transports.
//   - WebSocket: /connection/websocket, Centrifugo's JSON protocol: the receiver sends
//     {"id":1,"connect":{"token":…}}; the server answers the connect (the receiver is then
//     online, as the chat's welcome says), then pushes each publication as
//     {"push":{"channel":…,"pub":{"data":…}}}, several newline-separated replies to a frame
//     at times. An empty command {} is the server's ping, answered with {}.
//   - SSE: Centrifugo's uni-directional transport, GET /connection/uni_sse?cf_connect=<the
//     connect request as JSON>; the first event is the connect, each later one a publication.
//   - The broadcast is a publish through the server API: POST /api/publish with the API key,
//     {"channel":…,"data":{"text":…}}, the text carrying the run's token and the message's
//     number as the chat's messages do.

// Kinds of server a chat scenario measures (ScenarioOptions.Server).
const (
	// ServerWasmgap is `wasmgap chat` (or the chat of `wasmgap serve`): the default.
	ServerWasmgap = "wasmgap"
	// ServerCentrifugo is a Centrifugo server (v5 or v6), in the fan-out scenarios.
	ServerCentrifugo = "centrifugo"
)

// DefaultCentrifugoChannel is the channel of a Centrifugo scenario when none is given.
const DefaultCentrifugoChannel = "chat"

// CentrifugoOptions say how a scenario reaches a Centrifugo server.
type CentrifugoOptions struct {
	// APIKey is the key of the server API (Centrifugo's http_api.key), for the publishes.
	APIKey string
	// TokenSecret is the HMAC secret of connection tokens (client.token.hmac_secret_key).
	TokenSecret string
	// Channel is the channel the receivers are subscribed to and the broadcasts published
	// in; DefaultCentrifugoChannel when empty.
	Channel string
}

func (c *CentrifugoOptions) channel() string {
	if c.Channel == "" {
		return DefaultCentrifugoChannel
	}
	return c.Channel
}

// validate says what a Centrifugo scenario is missing.
func (c *CentrifugoOptions) validate() error {
	switch {
	case c.APIKey == "":
		return errors.New("a Centrifugo target needs its server API key (http_api.key)")
	case c.TokenSecret == "":
		return errors.New("a Centrifugo target needs the HMAC secret of its connection tokens (client.token.hmac_secret_key)")
	}
	return nil
}

// CentrifugoToken mints the connection token the Centrifugo scenarios' receivers show:
// user sub, subscribed on the server's side to channel, signed with the HMAC secret of the
// server's client.token.hmac_secret_key, valid for a day.
func CentrifugoToken(secret, sub, channel string) string {
	return centrifugoToken(secret, sub, channel, time.Now())
}

// centrifugoToken mints a connection token for user sub, subscribed on the server's side to
// channel, valid for a day (HS256, RFC 7519).
func centrifugoToken(secret, sub, channel string, now time.Time) string {
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	claims, _ := json.Marshal(struct {
		Sub      string   `json:"sub"`
		Channels []string `json:"channels"`
		Exp      int64    `json:"exp"`
	}{sub, []string{channel}, now.Add(24 * time.Hour).Unix()})
	msg := head + "." + base64.RawURLEncoding.EncodeToString(claims)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(msg))
	return msg + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// centrifugoConnect is the connect request of a receiver, as JSON.
func (s *subscriber) centrifugoConnect() []byte {
	c := s.t.centrifugo
	b, _ := json.Marshal(map[string]any{"token": centrifugoToken(c.TokenSecret, s.nick, c.channel(), time.Now()), "name": "wasmgap-load"})
	return b
}

// centrifugoSSEPath is the request URI of a receiver's uni-directional SSE stream.
func (s *subscriber) centrifugoSSEPath() string {
	u := s.t.base.JoinPath("connection", "uni_sse")
	u.RawQuery = url.Values{"cf_connect": {string(s.centrifugoConnect())}}.Encode()
	return u.RequestURI()
}

// centrifugoWSURL is the WebSocket endpoint of the server at base.
func centrifugoWSURL(base *url.URL) url.URL {
	u := *base.JoinPath("connection", "websocket")
	if u.Scheme == "https" {
		u.Scheme = "wss"
	} else {
		u.Scheme = "ws"
	}
	return u
}

// centrifugoConnectCommand is the first frame a WebSocket receiver sends.
func (s *subscriber) centrifugoConnectCommand() []byte {
	return fmt.Appendf(nil, `{"id":1,"connect":%s}`, s.centrifugoConnect())
}

// centrifugoFrame hands on the replies of one WebSocket message from Centrifugo (b, or one
// longer than maxFrame, unread): each line is a reply; the run's publications go to onEvent
// with their text, every other reply as a bare event (the first one, the connect's answer,
// says the receiver is online); pings are answered. A refused connect ends the stream.
func (s *subscriber) centrifugoFrame(b []byte, tooLong bool, onEvent func(event), reply func(opcode byte, payload []byte) error) error {
	if tooLong {
		onEvent(event{})
		return nil
	}
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		b = rest
		line = bytes.TrimSpace(line)
		switch {
		case len(line) == 0:
		case bytes.Equal(line, []byte("{}")):
			if err := reply(wsText, line); err != nil {
				return err
			}
		case bytes.Contains(line, s.t.token):
			onEvent(event{text: string(line)})
		case bytes.HasPrefix(line, []byte(`{"id":1,"error"`)):
			return fmt.Errorf("centrifugo refused the connect: %s", truncate(line))
		default:
			onEvent(event{})
		}
	}
	return nil
}

// centrifugoPublish publishes text in the scenario's channel through the server API at base,
// and returns the answer's status and size. An answer with an error is an error.
func centrifugoPublish(ctx context.Context, client *http.Client, c *CentrifugoOptions, base *url.URL, body *bytes.Buffer, text string) (int, int64, error) {
	body.Reset()
	json.NewEncoder(body).Encode(map[string]any{"channel": c.channel(), "data": map[string]string{"text": text}})
	req, err := http.NewRequestWithContext(ctx, "POST", base.JoinPath("api", "publish").String(), bytes.NewReader(body.Bytes()))
	if err != nil {
		return 0, 0, fmt.Errorf("build publish request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", c.APIKey)
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	ans, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return resp.StatusCode, int64(len(ans)), err
	}
	if resp.StatusCode == 200 && bytes.Contains(ans, []byte(`"error"`)) {
		return resp.StatusCode, int64(len(ans)), fmt.Errorf("centrifugo refused the publish: %s", truncate(ans))
	}
	return resp.StatusCode, int64(len(ans)), nil
}
