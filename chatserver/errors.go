package chatserver

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/wasmgap/wasmgap/chatserver/internal/store"
)

// The kinds of refusal a send or a login can meet, for errors.Is. Each error
// the chat returns for them says what was wrong and what is allowed; the
// kind only sorts it (the routes pick the HTTP status by kind, see
// statusOf).
var (
	// ErrInvalid: a nickname, text or resume id that is not allowed (400).
	ErrInvalid = errors.New("not allowed")
	// ErrTooLarge: a message text over MaxMessageBytes (413).
	ErrTooLarge = errors.New("message too large")
	// ErrMailboxFull: the offline receiver's mailbox holds MaxMailbox messages (409).
	ErrMailboxFull = errors.New("mailbox full")
	// ErrSenderMailFull: the mail waiting from the sender's address is at
	// its limits, a tenth of MaxMailboxes and of MaxStoreBytes (429).
	ErrSenderMailFull = errors.New("too much mail waiting from one address")
	// ErrStoreFull: the store holds MaxStoreBytes of data, or MaxMailboxes
	// users have messages waiting (507; so does a send refused because the
	// disk has no room for the store's next checkpoint, store.ErrNoRoom).
	ErrStoreFull = errors.New("chat store full")
	// ErrShuttingDown: the server is draining; retry in a moment (503).
	ErrShuttingDown = errors.New("the chat server is shutting down; retry in a moment")
	// ErrStoreDamaged is wrapped by every error about a damaged store file:
	// one that is truncated, overwritten or not a store at all.
	ErrStoreDamaged = store.ErrDamaged
)

// refusal is an error of a kind with its own full message.
type refusal struct {
	kind error
	msg  string
}

func (e *refusal) Error() string { return e.msg }
func (e *refusal) Unwrap() error { return e.kind }

// refuse returns an error of kind whose message is the formatted text alone.
func refuse(kind error, format string, args ...any) error {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// RateError refuses a send over its sender's rate (429); Wait says when to retry.
type RateError struct {
	From string
	Rule string
	Wait time.Duration
}

func (e *RateError) Error() string {
	return fmt.Sprintf("%s is sending too fast (%s): retry in %v", e.From, e.Rule, e.Wait.Round(time.Millisecond))
}

// statusOf is the HTTP status that answers err, by its kind; 0 for an error
// of no known kind (a failure of the server, not a refusal).
func statusOf(err error) int {
	if _, ok := errors.AsType[*RateError](err); ok {
		return http.StatusTooManyRequests
	}
	switch {
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, ErrMailboxFull):
		return http.StatusConflict
	case errors.Is(err, ErrSenderMailFull):
		return http.StatusTooManyRequests
	case errors.Is(err, ErrStoreFull), errors.Is(err, store.ErrNoRoom):
		return http.StatusInsufficientStorage
	case errors.Is(err, ErrShuttingDown), errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable
	}
	return 0
}

// retryAfter is the Retry-After header of the answer that refuses a send
// with status and err: "" for none.
func retryAfter(status int, err error) string {
	if status == http.StatusServiceUnavailable {
		return "1"
	}
	if re, ok := errors.AsType[*RateError](err); ok {
		return strconv.Itoa(int(math.Ceil(re.Wait.Seconds())))
	}
	return ""
}

// refusesOne reports whether err refuses one request and leaves the rest of
// its batch to commit (as opposed to a store failure, which fails the batch).
func refusesOne(err error) bool {
	return errors.Is(err, ErrMailboxFull) || errors.Is(err, ErrSenderMailFull) || errors.Is(err, ErrShuttingDown) || errors.Is(err, ErrStoreFull)
}

// answerText is err's text for a client: a refusal's own, but for a
// failure of the server (500 and up: its store, its disk) one that names
// none of its files, which the hub's log of the failed batch names.
func answerText(status int, err error) string {
	if status < 500 || statusOf(err) != 0 && !errors.Is(err, store.ErrNoRoom) {
		return err.Error()
	}
	return "the chat server could not store this request (a full disk, or a failure its log tells), and nothing of it was stored: retry later"
}
