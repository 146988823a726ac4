// Package fastpath answers the chat's two hottest plain requests before
// net/http: GET or HEAD / (the page, from prebuilt bytes) and the article's
// send route GET /msg/... (sent, and answered as the handler would). A
// Listener accepts every connection, answers those requests itself, each
// in one write, and hands every other connection to net/http with the
// bytes it has read: from the first request it does not answer on,
// net/http serves the connection (its routes, Host check, errors,
// keep-alive and pipelining).
//
// On Linux the Listener accepts bare sockets (nbio.Acceptor). A request
// that is there at the accept and closes its connection (ab's lines, a
// connection per request) is answered without a goroutine of its own and
// without the socket ever entering Go's netpoller: the page on the
// accepting goroutine; a send by whoever stores it, through App.Send's
// answer. Any other connection becomes a net.Conn and is served on a
// goroutine, here or by net/http.
//
// What the answers say is the App's (chatserver.Server's): the fast path
// knows HTTP/1.1's framing, not the chat. ParseRequest decides what is
// answered here, only what it reads completely and the way net/http would;
// anything else, however valid, is net/http's.
//
// A profile of GET / under `wrk -c 100` put most of the server's CPU in
// net/http's per-request work and in its two writes per answer (the 7 KB
// page overflows its 4 KB write buffer); one of `ab -c 10` on the send
// route put half of it in net/http's per-connection work (a goroutine,
// bufio readers and writers, a Request with its Header map and context,
// the ResponseWriter).
package fastpath

// App is what the fast path answers for.
type App interface {
	// Page returns the complete answer (head and body) to r, a plain GET
	// or HEAD of "/", and the length of its head (the answer to HEAD). The
	// bytes are shared: the fast path never writes to them.
	Page(r *Request) (answer []byte, head int)
	// Send sends the post of r, a plain GET of /msg/... (r.Target), and
	// calls answer once with the handler's answer when the post is stored,
	// on whatever goroutine; it does not wait for that. sent is false when
	// the post is refused before it is sent (answer is not called): the
	// request then goes to net/http, which answers it.
	Send(r *Request, answer func(Reply)) (sent bool)
}

// Reply is the answer to a send: for Status 200, Text as the handler
// writes it (text/plain); for any other status, Text as http.Error writes
// it, with a Retry-After header when RetryAfter is set.
type Reply struct {
	Status     int
	Text       string // without its final newline
	RetryAfter string
}

// Form is the wording of an answer's status line and Connection header, as
// net/http words them for a request.
type Form int

const (
	Form11KeepAlive Form = iota // HTTP/1.1, no Connection header
	Form11Close                 // HTTP/1.1, Connection: close
	Form10Close                 // HTTP/1.0, no Connection header
	Form10KeepAlive             // HTTP/1.0, Connection: keep-alive
	NumForms
)

var forms = [NumForms]struct{ proto, connection string }{
	{"HTTP/1.1", ""}, {"HTTP/1.1", "close"}, {"HTTP/1.0", ""}, {"HTTP/1.0", "keep-alive"},
}

// Proto is the form's protocol version, as its status line starts.
func (f Form) Proto() string { return forms[f].proto }

// Connection is the form's Connection header value ("": none).
func (f Form) Connection() string { return forms[f].connection }
