package chatserver

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/fastpath"
	"github.com/wasmgap/wasmgap/chatserver/internal/page"
	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// Listen listens on a TCP address for Serve. For the host "localhost" it
// listens on both loopback addresses, 127.0.0.1 and ::1 (when the machine
// has IPv6), because clients differ in which one they pick for "localhost":
// ab, for one, takes the first answer of the resolver, often ::1.
//
// Its connections have no TCP keep-alive (Go turns it on for every accepted
// connection, with system calls of its own): an idle HTTP connection ends
// after IdleTimeout and a stream finds a dead client with its KeepAlive
// pings. On Linux they are accepted once their first request has arrived.
func Listen(addr string) (net.Listener, error) { return fastpath.Listen(addr) }

// fastSide is what Serve's fast path (package fastpath) answers with: the
// page's prebuilt answers (internal/page) and the send route, as the handler
// answers them.
type fastSide struct{ s *Server }

func (f fastSide) Page(r *fastpath.Request) ([]byte, int) { return page.Answer(r, time.Now()) }

// Send is serveMsg for a plain request: the post read by msgPost and sent
// by sendThen, answered through answer.
func (f fastSide) Send(r *fastpath.Request, answer func(fastpath.Reply)) bool {
	p, _, err := f.s.msgPost(string(r.Target))
	if err != nil || f.s.auth.GuardsSends(p.From) || f.s.proxies.Trusts(r.Remote) {
		// Refused, to be authorized, or from a proxy that names its client in a
		// header: net/http's answer.
		return false
	}
	p.Addr = f.s.proxies.Key(httpguard.PeerAddr(r.Remote)) // the per-address limits' key, as clientAddr

	// net/http's request context ends when the client leaves; the send
	// then goes on all the same (a post is not undone), so no context is
	// needed here.
	f.s.sendThen(context.Background(), p, func(_ bool, status int, err error) {
		if err != nil {
			answer(fastpath.Reply{Status: status, Text: answerText(status, err), RetryAfter: retryAfter(status, err)})
		} else {
			answer(fastpath.Reply{Status: http.StatusOK, Text: "ok"})
		}
	})
	return true
}
