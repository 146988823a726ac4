package httpguard

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// BodyTimeoutError is the read error of a request body that did not arrive within its
// deadline (LimitBody). Its text names the limit and no address: the connection's own
// error ("read tcp 127.0.0.1:8080->...: i/o timeout") is not for the client.
type BodyTimeoutError struct {
	Limit time.Duration
}

func (e *BodyTimeoutError) Error() string {
	return fmt.Sprintf("the request body did not arrive within %v: send it at once", e.Limit)
}

// StatusCode is the HTTP status that answers the error: 408 Request Timeout.
func (e *BodyTimeoutError) StatusCode() int { return http.StatusRequestTimeout }

// Timeout reports true: the error is a deadline's, as net.Error says.
func (e *BodyTimeoutError) Timeout() bool { return true }

// BodyStatus is the status that answers a failure to read or decode a request body: 408
// for a body that did not arrive in time (a *BodyTimeoutError in err's chain), otherwise
// otherwise.
func BodyStatus(err error, otherwise int) int {
	if _, ok := errors.AsType[*BodyTimeoutError](err); ok {
		return http.StatusRequestTimeout
	}
	return otherwise
}

// LimitBody gives the request's body timeout to arrive, through a read deadline on its
// connection that is lifted once the body is read; a read past it fails with a
// *BodyTimeoutError. A global http.Server.ReadTimeout would also bound the reads that
// follow the body, which net/http uses to notice a client that leaves: it would end every
// SSE stream and break every WebSocket after that time.
func LimitBody(w http.ResponseWriter, r *http.Request, timeout time.Duration) {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return // not a connection with deadlines (a test recorder): nothing to bound
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, limit: timeout, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
}

// deadlineBody lifts its connection's read deadline once the body has been read to its
// end. After a failed read the deadline stays: net/http then reads what is left of the
// body before it answers, and must not wait for it forever.
type deadlineBody struct {
	io.ReadCloser
	limit  time.Duration
	lift   func()
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		b.lift()
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		err = &BodyTimeoutError{Limit: b.limit}
	}
	return n, err
}
