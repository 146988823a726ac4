package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// event is one chat event as a subscriber receives it.
type event struct {
	id   uint64
	text string
}

// subscriber is one logged-in chat user reading its event stream, over SSE or WebSocket.
// On a dropped connection it resumes from the last id it saw, as the chat's clients do.
type subscriber struct {
	base      *url.URL // the chat's base URL, ending in "/"
	nick      string
	transport string // "sse" or "ws"
	client    *http.Client
	dialer    *websocket.Dialer

	lastID     uint64
	reconnects int64
}

// errStreamEnded is returned when the server ended a stream on purpose (for example when
// shutting down).
var errStreamEnded = errors.New("stream ended by the server")

// run connects and calls onEvent for every event until ctx ends. ready is called once, after
// the first event (the chat's "Welcome <nick>!"), which says the user is online.
func (s *subscriber) run(ctx context.Context, ready func(), onEvent func(event)) error {
	first := true
	var lastErr error
	for attempt := 0; ctx.Err() == nil; attempt++ {
		var err error
		switch s.transport {
		case "ws":
			err = s.runWS(ctx, func(ev event) {
				if first {
					first = false
					ready()
				}
				onEvent(ev)
			})
		default:
			err = s.runSSE(ctx, func(ev event) {
				if first {
					first = false
					ready()
				}
				onEvent(ev)
			})
		}
		if ctx.Err() != nil {
			return nil
		}
		lastErr = err
		if first && attempt >= 2 {
			return fmt.Errorf("subscribe %s over %s: %w", s.nick, s.transport, err)
		}
		s.reconnects++
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(min(attempt+1, 10)) * 50 * time.Millisecond):
		}
	}
	_ = lastErr
	return nil
}

func (s *subscriber) runSSE(ctx context.Context, onEvent func(event)) error {
	u := s.base.JoinPath(s.nick)
	req, err := http.NewRequestWithContext(ctx, "GET", u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if s.lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(s.lastID, 10))
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	br := bufio.NewReaderSize(resp.Body, 16<<10)
	var ev event
	var data []string
	hasID := false
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if err == bufio.ErrBufferFull {
				return fmt.Errorf("SSE line longer than 16 KiB")
			}
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if len(data) > 0 {
				ev.text = strings.Join(data, "\n")
				if hasID {
					s.lastID = ev.id
				}
				onEvent(ev)
			}
			ev, data, hasID = event{}, data[:0], false
		case line[0] == ':':
			// a comment: ping, or the server's reason for closing
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "id":
				if n, err := strconv.ParseUint(string(value), 10, 64); err == nil {
					ev.id, hasID = n, true
				}
			case "data":
				data = append(data, string(value))
			}
		}
	}
}

func (s *subscriber) runWS(ctx context.Context, onEvent func(event)) error {
	u := *s.base
	if u.Scheme == "https" {
		u.Scheme = "wss"
	} else {
		u.Scheme = "ws"
	}
	u.Path += "ws"
	q := url.Values{"nick": {s.nick}}
	if s.lastID > 0 {
		q.Set("resume", strconv.FormatUint(s.lastID, 10))
	}
	u.RawQuery = q.Encode()
	conn, resp, err := s.dialer.DialContext(ctx, u.String(), nil)
	if err != nil {
		if resp != nil {
			return fmt.Errorf("dial %s: HTTP %d: %w", u.String(), resp.StatusCode, err)
		}
		return fmt.Errorf("dial %s: %w", u.String(), err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var msg struct {
		ID    uint64 `json:"id"`
		Text  string `json:"text"`
		Error string `json:"error"`
	}
	for {
		_, b, err := conn.ReadMessage()
		if err != nil {
			return err
		}
		msg.ID, msg.Text, msg.Error = 0, "", ""
		if err := json.Unmarshal(b, &msg); err != nil {
			return fmt.Errorf("WebSocket frame %q: %w", truncate(b), err)
		}
		if msg.Error != "" && msg.Text == "" {
			continue
		}
		if msg.ID > 0 {
			s.lastID = msg.ID
		}
		onEvent(event{id: msg.ID, text: msg.Text})
	}
}
