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

// The fan-out and churn scenarios measure a Centrifugo server as they measure the chat, with
// the same receivers, event loops and histograms, so that one client measures both servers:
// only the protocol differs (centrifugoProtocol).
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
	// ServerCentrifugo is a Centrifugo server (v5 or v6), in the fan-out and churn scenarios.
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

// centrifugoServer is the Centrifugo kind of server: the fan-out and churn scenarios speak to
// it, given its keys.
var centrifugoServer = serverKind{ServerCentrifugo, func(o *ScenarioOptions) (protocol, error) {
	if o.Scenario == ScenarioChatSend {
		return nil, fmt.Errorf("server %s: only the fan-out and churn scenarios (%s, %s, %s) speak Centrifugo's protocol", o.Server, ScenarioSSEFanout, ScenarioWSFanout, ScenarioChurn)
	}
	if err := o.Centrifugo.validate(); err != nil {
		return nil, err
	}
	return centrifugoProtocol{o.Centrifugo}, nil
}}

// centrifugoProtocol speaks to a Centrifugo server (see the top of this file). It resumes
// nothing: a receiver that reconnects logs in anew.
type centrifugoProtocol struct{ c CentrifugoOptions }

// connect is the connect request of receiver nick, as JSON.
func (p centrifugoProtocol) connect(nick string) []byte {
	b, _ := json.Marshal(map[string]any{"token": centrifugoToken(p.c.TokenSecret, nick, p.c.channel(), time.Now()), "name": "wasmgap-load"})
	return b
}

// sse is the request URI of a receiver's uni-directional SSE stream.
func (p centrifugoProtocol) sse(base *url.URL, nick string, _ uint64) (string, uint64) {
	u := base.JoinPath("connection", "uni_sse")
	u.RawQuery = url.Values{"cf_connect": {string(p.connect(nick))}}.Encode()
	return u.RequestURI(), 0
}

// ws is the WebSocket endpoint and the connect command, the first frame a receiver sends.
func (p centrifugoProtocol) ws(base *url.URL, nick string, _ uint64) (url.URL, []byte) {
	return wsURL(base, "connection", "websocket"), fmt.Appendf(nil, `{"id":1,"connect":%s}`, p.connect(nick))
}

// frame hands on the replies of one WebSocket message from Centrifugo (b, or one longer than
// maxFrame, unread): each line is a reply; the run's publications go to onEvent with their
// text, every other reply as a bare event (the first one, the connect's answer, says the
// receiver is online); pings are answered. A refused connect ends the stream.
func (centrifugoProtocol) frame(s *subscriber, b []byte, tooLong bool, onEvent func(event), reply func(opcode byte, payload []byte) error) error {
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

// publish publishes text in the scenario's channel through the server API at base, and
// returns the answer's status and size. An answer with an error is an error.
func (p centrifugoProtocol) publish(ctx context.Context, client *http.Client, base *url.URL, body *bytes.Buffer, _ []byte, _, _, text string) (int, int64, error) {
	c := &p.c
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
