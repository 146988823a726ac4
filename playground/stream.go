package playground

import (
	"context"
	"errors"
	"net/http"

	"github.com/wasmgap/wasmgap/internal/ndjson"
)

// serveQueued is what the streamed runs (POST /api/run, POST /api/warmup) share once their
// request is checked: the server's admission and run queue (the client's share of it, 503
// with Retry-After past it), an NDJSON stream of "queued" positions, "started", then run's
// own events, and an "error" event when run fails. The run's context ends with the request
// or with the server (Shutdown). event makes the stream's event of a type with its queue
// position or error message.
func serveQueued[E any](s *Server, w http.ResponseWriter, r *http.Request, event func(typ string, position int, msg string) E, run func(ctx context.Context, send func(E)) error) {
	if !s.enter() {
		refuse(w, errShuttingDown)
		return
	}
	defer s.active.Done()
	t, err := s.queue.enter(clientOf(r), measured)
	if err != nil {
		refuse(w, err)
		return
	}

	st := ndjson.Start(w)
	send := func(e E) { _ = st.Send(e) } // a client that is gone ends the run through ctx

	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	stop := context.AfterFunc(s.closing, func() { cancel(errShuttingDown) })
	defer stop()
	shuttingDown := func() bool {
		if errors.Is(context.Cause(ctx), errShuttingDown) {
			send(event("error", 0, errShuttingDown.Error()))
			return true
		}
		return false
	}

	if err := t.wait(ctx, func(pos int) { send(event("queued", pos, "")) }); err != nil {
		shuttingDown() // else the client left while waiting
		return
	}
	defer t.release()
	send(event("started", 0, ""))
	if err := run(ctx, send); err != nil {
		if shuttingDown() || ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return
		}
		send(event("error", 0, err.Error()))
	}
}
