package playground

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/custom"
	"github.com/wasmgap/wasmgap/internal/httpguard"
	"github.com/wasmgap/wasmgap/kernels"
)

// maxCustomBody bounds the JSON of a build request: a source of custom.MaxSource bytes,
// escaped.
const maxCustomBody = 8 * custom.MaxSource

// customRequest is the body of POST /api/custom.
type customRequest struct {
	Source string `json:"source"`
}

// customAnswer is the answer of POST /api/custom and GET /api/custom/{id}.
type customAnswer struct {
	// ID is what POST /api/run takes as its kernel.
	ID string `json:"id"`
	// Func is the kernel's function: its name, its parameters and their types.
	Func custom.Func `json:"func"`
	// Params are the parameters as the catalogue describes them (ranges).
	Params []kernels.Param `json:"params"`
	// Engines are the server engines that run it.
	Engines []string `json:"engines"`
	// Cached is true when the build came from the cache; BuildNS is its time otherwise.
	Cached  bool  `json:"cached"`
	BuildNS int64 `json:"build_ns"`
	// Source is the kernel's source (GET only).
	Source string `json:"source,omitempty"`
}

// customError is the body of a refused build: the message and each fault's place.
type customError struct {
	Error  string        `json:"error"`
	Errors custom.Errors `json:"errors,omitempty"`
}

// customEngines are the server's engines that run the user kernel k.
func (s *Server) customEngines(k *custom.Kernel) []string {
	var out []string
	for _, e := range custom.EnginesFor(k) {
		for _, have := range s.engines {
			if e == have {
				out = append(out, e)
			}
		}
	}
	return out
}

func (s *Server) answer(k *custom.Kernel) customAnswer {
	return customAnswer{ID: k.ID, Func: k.Func, Params: k.Kernel().Params, Engines: s.customEngines(k),
		Cached: k.Cached, BuildNS: int64(k.BuildTime)}
}

const customOff = "user kernels are off on this server (wasmgap serve turns them on unless it is started with --no-custom)"

func (s *Server) handleCustom(w http.ResponseWriter, r *http.Request) {
	if s.opts.Custom == nil {
		writeError(w, http.StatusNotFound, apiError{Error: customOff})
		return
	}
	var req customRequest
	body := jsonBody{route: "POST /api/custom", max: maxCustomBody, fields: `source (the kernel's Go source, a string)`, field: "source",
		tooLarge: fmt.Sprintf(": a kernel's source may have at most %d bytes (%d KiB)", custom.MaxSource, custom.MaxSource>>10)}
	if aerr := body.decode(w, r, &req); aerr != nil {
		writeError(w, aerr.status, *aerr)
		return
	}
	release, ok := s.admitBuild(w, r, []byte(req.Source))
	if !ok {
		return
	}
	k, err := s.opts.Custom.BuildFor(r.Context(), clientOf(r), []byte(req.Source))
	release()
	if err != nil {
		var errs custom.Errors
		var limit *custom.LimitError
		var rateErr *custom.RateError
		switch {
		case errors.As(err, &rateErr):
			w.Header().Set("Retry-After", retryAfter(rateErr.RetryAfter))
			writeError(w, http.StatusTooManyRequests, apiError{Error: rateErr.Error()})
		case errors.As(err, &errs):
			writeJSON(w, http.StatusUnprocessableEntity, customError{Error: err.Error(), Errors: errs})
		case errors.As(err, &limit):
			writeJSON(w, http.StatusUnprocessableEntity, customError{Error: limit.Error()})
		case r.Context().Err() != nil:
			// The client left; nothing to answer.
		default:
			writeError(w, http.StatusServiceUnavailable, apiError{Error: "the kernel could not be built: " + err.Error()})
		}
		return
	}
	writeJSON(w, http.StatusOK, s.answer(k))
}

// admitBuild takes a place in the run queue for a build of src (admit), which then shares
// the machine with runs under the client's share. A source that is refused by its check
// or was built before takes no place: its answer is at hand.
func (s *Server) admitBuild(w http.ResponseWriter, r *http.Request, src []byte) (release func(), ok bool) {
	if _, err := custom.Check(src); err != nil {
		return func() {}, true
	}
	if _, err := s.opts.Custom.Lookup(custom.ID(src)); err == nil {
		return func() {}, true
	}
	return s.admit(w, r, building)
}

// clientOf names the client of a run, a study, a build or a submission for every
// per-address limit of the playground (its share of the queue, its rates): its address as
// httpguard keys it, an IPv6 address by its /64 (Proxies.Key).
func clientOf(r *http.Request) string {
	return (*httpguard.Proxies)(nil).Key(httpguard.PeerAddr(r.RemoteAddr))
}

// retryAfter renders d as a Retry-After header: whole seconds, at least one.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int((d+time.Second-1)/time.Second)))
}

// customFromPath looks up the user kernel that the request's {id} names, or answers 404
// saying why (user kernels off, an unknown id).
func (s *Server) customFromPath(w http.ResponseWriter, r *http.Request) (*custom.Kernel, bool) {
	if s.opts.Custom == nil {
		writeError(w, http.StatusNotFound, apiError{Error: customOff})
		return nil, false
	}
	k, err := s.opts.Custom.Lookup(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusNotFound, apiError{Error: err.Error()})
		return nil, false
	}
	return k, true
}

func (s *Server) handleCustomGet(w http.ResponseWriter, r *http.Request) {
	k, ok := s.customFromPath(w, r)
	if !ok {
		return
	}
	src, err := os.ReadFile(k.SourcePath())
	if err != nil {
		writeError(w, http.StatusNotFound, apiError{Error: "the source of " + k.ID + " is gone: build it again"})
		return
	}
	a := s.answer(k)
	a.Source = string(src)
	writeJSON(w, http.StatusOK, a)
}

// lookupCustom resolves a run request's kernel when it names a user kernel.
func (s *Server) lookupCustom(name string) (*custom.Kernel, bool, *apiError) {
	if !strings.HasPrefix(name, custom.IDPrefix) {
		return nil, false, nil
	}
	if s.opts.Custom == nil {
		return nil, true, &apiError{Error: customOff, Field: "kernel"}
	}
	k, err := s.opts.Custom.Lookup(name)
	if err != nil {
		return nil, true, &apiError{Error: err.Error(), Field: "kernel"}
	}
	return k, true, nil
}

// handleCustomWasm serves a built user kernel's module, for the page's browser-wasm
// engine. Builds never change (the id is the source's hash): it may be cached for good.
func (s *Server) handleCustomWasm(w http.ResponseWriter, r *http.Request) {
	k, ok := s.customFromPath(w, r)
	if !ok {
		return
	}
	b, err := os.ReadFile(k.ModulePath())
	if err != nil {
		writeError(w, http.StatusNotFound, apiError{Error: "the module of " + k.ID + " is gone: build it again"})
		return
	}
	w.Header().Set("Content-Type", "application/wasm")
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	_, _ = w.Write(b)
}
