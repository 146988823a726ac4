// Package bidi is a small WebDriver BiDi client (https://w3c.github.io/webdriver-bidi/), the
// protocol Firefox speaks on --remote-debugging-port: a session over one WebSocket, commands
// matched to their answers by id, and events delivered to handlers. It knows the few
// commands the project drives a page with — session.new and session.end,
// browsingContext.getTree, create, navigate, setViewport and captureScreenshot,
// script.evaluate with awaitPromise, session.subscribe for log.entryAdded — and nothing
// else; Call sends any other command.
//
// A client of its own over gorilla/websocket (already a dependency of the chat server), not
// puppeteer-core from npm: puppeteer would need Node and npm packages at run time, one Node
// process per browser besides the browser, and a script speaking a second protocol to Go;
// BiDi's commands the project needs fit in this file.
package bidi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Conn is one BiDi session over a WebSocket. Its methods are safe for concurrent use.
type Conn struct {
	ws      *websocket.Conn
	writeMu sync.Mutex

	mu       sync.Mutex
	nextID   int64
	pending  map[int64]chan reply
	handlers []func(method string, params json.RawMessage)
	closed   error // why the connection ended, once it has
	done     chan struct{}

	// Browser and Version are what session.new said: "firefox", "153.8.0".
	Browser, Version string
}

type reply struct {
	result json.RawMessage
	err    error
}

// Error is a command's error as the browser reported it.
type Error struct {
	Command string
	Code    string // "no such frame", "invalid argument", …
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("bidi %s: %s: %s", e.Command, e.Code, e.Message)
}

// Dial connects to the browser's BiDi endpoint (ws://127.0.0.1:PORT, to which /session is
// added when the URL has no path) and starts a session.
func Dial(ctx context.Context, url string) (*Conn, error) {
	if rest, ok := strings.CutPrefix(url, "ws://"); ok && !strings.Contains(rest, "/") {
		url += "/session"
	}
	d := websocket.Dialer{HandshakeTimeout: 30 * time.Second}
	ws, _, err := d.DialContext(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("bidi: connect to %s: %w", url, err)
	}
	ws.SetReadLimit(64 << 20)
	c := &Conn{ws: ws, pending: map[int64]chan reply{}, done: make(chan struct{})}
	go c.read()
	var s struct {
		Capabilities struct {
			BrowserName    string `json:"browserName"`
			BrowserVersion string `json:"browserVersion"`
		} `json:"capabilities"`
	}
	if err := c.Call(ctx, "session.new", map[string]any{"capabilities": map[string]any{}}, &s); err != nil {
		ws.Close()
		return nil, err
	}
	c.Browser, c.Version = s.Capabilities.BrowserName, s.Capabilities.BrowserVersion
	return c, nil
}

// read delivers answers to their callers and events to the handlers until the socket ends.
func (c *Conn) read() {
	var err error
	for {
		var msg struct {
			Type    string          `json:"type"`
			ID      *int64          `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   string          `json:"error"`
			Message string          `json:"message"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		if err = c.ws.ReadJSON(&msg); err != nil {
			break
		}
		switch {
		case msg.Type == "event":
			c.mu.Lock()
			hs := c.handlers
			c.mu.Unlock()
			for _, h := range hs {
				h(msg.Method, msg.Params)
			}
		case msg.ID != nil:
			c.mu.Lock()
			ch := c.pending[*msg.ID]
			delete(c.pending, *msg.ID)
			c.mu.Unlock()
			if ch == nil {
				continue
			}
			if msg.Type == "error" {
				ch <- reply{err: &Error{Code: msg.Error, Message: msg.Message}}
			} else {
				ch <- reply{result: msg.Result}
			}
		}
	}
	c.mu.Lock()
	c.closed = fmt.Errorf("bidi: the connection ended: %w", err)
	for id, ch := range c.pending {
		ch <- reply{err: c.closed}
		delete(c.pending, id)
	}
	c.mu.Unlock()
	close(c.done)
}

// Call sends a command and decodes its result into result (nil: discarded).
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	if params == nil {
		params = struct{}{}
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.closed != nil {
		c.mu.Unlock()
		return c.closed
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()

	c.writeMu.Lock()
	err := c.ws.WriteJSON(map[string]any{"id": id, "method": method, "params": params})
	c.writeMu.Unlock()
	if err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("bidi %s: send: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			var e *Error
			if errors.As(r.err, &e) {
				e.Command = method
			}
			return r.err
		}
		if result != nil {
			if err := json.Unmarshal(r.result, result); err != nil {
				return fmt.Errorf("bidi %s: decode the result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("bidi %s: %w", method, ctx.Err())
	}
}

// OnEvent adds a handler of the events the session subscribed to (Subscribe). Handlers run
// on the reading goroutine: they must not block or Call.
func (c *Conn) OnEvent(h func(method string, params json.RawMessage)) {
	c.mu.Lock()
	c.handlers = append(c.handlers, h)
	c.mu.Unlock()
}

// Subscribe asks for events ("log.entryAdded", or a module: "log") in every context.
func (c *Conn) Subscribe(ctx context.Context, events ...string) error {
	return c.Call(ctx, "session.subscribe", map[string]any{"events": events}, nil)
}

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close ends the session (session.end, bounded by a short wait) and the connection. The
// browser itself is its starter's to end.
func (c *Conn) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.Call(ctx, "session.end", nil, nil)
	return c.ws.Close()
}

// TopContext returns the first top-level browsing context (the tab the browser opened),
// creating one when there is none.
func (c *Conn) TopContext(ctx context.Context) (string, error) {
	var tree struct {
		Contexts []struct {
			Context string `json:"context"`
		} `json:"contexts"`
	}
	if err := c.Call(ctx, "browsingContext.getTree", map[string]any{"maxDepth": 0}, &tree); err != nil {
		return "", err
	}
	if len(tree.Contexts) > 0 {
		return tree.Contexts[0].Context, nil
	}
	var created struct {
		Context string `json:"context"`
	}
	if err := c.Call(ctx, "browsingContext.create", map[string]any{"type": "tab"}, &created); err != nil {
		return "", err
	}
	return created.Context, nil
}

// Navigate loads url in the browsing context and waits until its load event has fired.
func (c *Conn) Navigate(ctx context.Context, context, url string) error {
	return c.Call(ctx, "browsingContext.navigate", map[string]any{"context": context, "url": url, "wait": "complete"}, nil)
}

// SetViewport sets the browsing context's viewport to width × height CSS pixels.
func (c *Conn) SetViewport(ctx context.Context, context string, width, height int) error {
	return c.Call(ctx, "browsingContext.setViewport", map[string]any{
		"context":  context,
		"viewport": map[string]any{"width": width, "height": height},
	}, nil)
}

// Evaluate runs the JavaScript expression in the browsing context, awaits it when it is a
// promise, and decodes its value, turned into JSON in the page (JSON.stringify), into out
// (nil: discarded). A thrown exception is an error with its message and stack.
func (c *Conn) Evaluate(ctx context.Context, context, expression string, out any) error {
	wrapped := "(async () => { const v = await (" + expression + "\n); const s = v === undefined ? undefined : JSON.stringify(v); return s === undefined ? 'null' : s; })()"
	var res struct {
		Type   string `json:"type"`
		Result struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails struct {
			Text      string `json:"text"`
			Exception struct {
				Type  string          `json:"type"`
				Value json.RawMessage `json:"value"`
			} `json:"exception"`
			StackTrace struct {
				CallFrames []struct {
					FunctionName string `json:"functionName"`
					URL          string `json:"url"`
					LineNumber   int    `json:"lineNumber"`
				} `json:"callFrames"`
			} `json:"stackTrace"`
		} `json:"exceptionDetails"`
	}
	err := c.Call(ctx, "script.evaluate", map[string]any{
		"expression":      wrapped,
		"target":          map[string]any{"context": context},
		"awaitPromise":    true,
		"resultOwnership": "none",
	}, &res)
	if err != nil {
		return err
	}
	if res.Type == "exception" {
		return fmt.Errorf("javascript exception: %s", res.ExceptionDetails.Text)
	}
	if out == nil {
		return nil
	}
	var text string
	if res.Result.Type != "string" || json.Unmarshal(res.Result.Value, &text) != nil {
		return fmt.Errorf("bidi script.evaluate: the page returned a %s, want the JSON string of its value", res.Result.Type)
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		return fmt.Errorf("decode the value the page returned (%.200s): %w", text, err)
	}
	return nil
}

// LogEntry is a log.entryAdded event: a console call or an uncaught error in a page.
type LogEntry struct {
	Type   string `json:"type"`  // "console", "javascript"
	Level  string `json:"level"` // "debug", "info", "warn", "error"
	Text   string `json:"text"`
	Source struct {
		Context string `json:"context"`
	} `json:"source"`
}

// OnLog subscribes to log.entryAdded and calls h with each entry.
func (c *Conn) OnLog(ctx context.Context, h func(LogEntry)) error {
	c.OnEvent(func(method string, params json.RawMessage) {
		if method != "log.entryAdded" {
			return
		}
		var e LogEntry
		if json.Unmarshal(params, &e) == nil {
			h(e)
		}
	})
	return c.Subscribe(ctx, "log.entryAdded")
}
