package playground

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wasmgap/wasmgap/internal/explain"
	"github.com/wasmgap/wasmgap/kernels"
)

// GET /api/explain?kernel=K&engine=E[&<param>=<value>…][&profile=1] answers what
// `wasmgap explain --format json` prints for one engine: the code of the kernel's hot
// function as that tier runs it after the warm-up (package explain). An explanation
// starts runtimes and compilers for seconds, so it runs in a child process (this binary)
// killed at explainTimeout, one at a time, and its answer is kept by (kernel, arguments,
// engine, profile, this binary's build).

const (
	// explainTimeout bounds one explanation (a JIT's warm-up, its printed code, a profile).
	explainTimeout = 3 * time.Minute
	// explainWaiting bounds the explanations that wait for the one running; more are 503.
	explainWaiting = 4
	// explainCached bounds the answers kept.
	explainCached = 256
)

// explainHandler serves GET /api/explain.
type explainHandler struct {
	run  func(ctx context.Context, k *kernels.Kernel, args []int, engine string, profile bool) (*explain.Report, error)
	slot chan struct{} // one explanation at a time
	wait chan struct{} // the waiting room

	mu     sync.Mutex
	cache  map[string]*explainEntry
	oldest []string // keys in the order they were added, for eviction
}

// explainEntry is one explanation, done or under way (its waiters share it).
type explainEntry struct {
	done chan struct{}
	rep  *explain.Report
	err  error
}

func newExplainHandler() *explainHandler {
	return &explainHandler{
		run: func(ctx context.Context, k *kernels.Kernel, args []int, engine string, profile bool) (*explain.Report, error) {
			return explain.InChild(ctx, k, args, []string{engine}, explain.Options{Profile: profile}, explainTimeout)
		},
		slot:  make(chan struct{}, 1),
		wait:  make(chan struct{}, explainWaiting),
		cache: map[string]*explainEntry{},
	}
}

// binaryVersion names this build: an explanation's code is this binary's, kernels.wasm
// included, so a new build explains afresh.
var binaryVersion = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	f, err := os.Open(exe)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
})

func (h *explainHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	k, err := kernels.Lookup(q.Get("kernel"))
	if err != nil {
		writeError(w, http.StatusBadRequest, apiError{Error: err.Error(), Field: "kernel"})
		return
	}
	eng := q.Get("engine")
	if err := explain.CheckEngines([]string{eng}); err != nil {
		writeError(w, http.StatusBadRequest, apiError{Error: err.Error(), Field: "engine"})
		return
	}
	profile := false
	switch q.Get("profile") {
	case "", "0", "false":
	case "1", "true":
		profile = true
	default:
		writeError(w, http.StatusBadRequest, apiError{Error: "profile must be 1 or 0", Field: "profile"})
		return
	}
	named := map[string]int{}
	for name, vs := range q {
		if name == "kernel" || name == "engine" || name == "profile" {
			continue
		}
		v, err := strconv.Atoi(vs[0])
		if err != nil || len(vs) != 1 {
			writeError(w, http.StatusBadRequest, apiError{Error: fmt.Sprintf("%s=%q: want one integer", name, strings.Join(vs, ",")), Field: "args." + name})
			return
		}
		named[name] = v
	}
	args, err := k.Args(named)
	if err != nil {
		field := "args"
		var ae *kernels.ArgError
		if errors.As(err, &ae) {
			field = "args." + ae.Param
		}
		writeError(w, http.StatusBadRequest, apiError{Error: err.Error(), Field: field})
		return
	}
	key := fmt.Sprintf("%s %v %s %v %s", k.Name, args, eng, profile, binaryVersion())

	h.mu.Lock()
	ent, ok := h.cache[key]
	if !ok {
		ent = &explainEntry{done: make(chan struct{})}
		h.cache[key] = ent
		h.oldest = append(h.oldest, key)
		if len(h.oldest) > explainCached {
			delete(h.cache, h.oldest[0])
			h.oldest = slices.Delete(h.oldest, 0, 1)
		}
	}
	h.mu.Unlock()
	if ok {
		select {
		case <-ent.done:
			w.Header().Set("X-Explain-Cache", "hit")
		case <-r.Context().Done():
			return
		}
	} else {
		h.explain(r.Context(), key, ent, k, args, eng, profile)
		w.Header().Set("X-Explain-Cache", "miss")
	}
	if ent.err != nil {
		status := http.StatusInternalServerError
		switch {
		case errors.Is(ent.err, errExplainBusy):
			status = http.StatusServiceUnavailable
			w.Header().Set("Retry-After", "30")
		case errors.Is(ent.err, explain.ErrTimeout):
			status = http.StatusGatewayTimeout
		}
		writeError(w, status, apiError{Error: ent.err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, ent.rep)
}

var errExplainBusy = fmt.Errorf("explanations are busy: %d wait for the one running; try again later", explainWaiting)

// explain makes ent's explanation: in the waiting room, then alone. A failure is not
// kept: the next request tries again.
func (h *explainHandler) explain(ctx context.Context, key string, ent *explainEntry, k *kernels.Kernel, args []int, eng string, profile bool) {
	defer close(ent.done)
	fail := func(err error) {
		ent.err = err
		h.mu.Lock()
		if h.cache[key] == ent {
			delete(h.cache, key)
			h.oldest = slices.DeleteFunc(h.oldest, func(s string) bool { return s == key })
		}
		h.mu.Unlock()
	}
	select {
	case h.wait <- struct{}{}:
		defer func() { <-h.wait }()
	default:
		fail(errExplainBusy)
		return
	}
	select {
	case h.slot <- struct{}{}:
		defer func() { <-h.slot }()
	case <-ctx.Done():
		fail(context.Cause(ctx))
		return
	}
	rep, err := h.run(ctx, k, args, eng, profile)
	if err != nil {
		fail(err)
		return
	}
	ent.rep = rep
}
