package playground

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wasmgap/wasmgap/internal/explain"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/kernels"
)

// GET /api/explain?kernel=K&engine=E[&<param>=<value>…][&profile=1] answers what
// `wasmgap explain --format json` prints for one engine: the code of the kernel's hot
// function as that tier runs it after the warm-up (package explain), with its summary in
// words (explain.Summarize). The page asks once per tier, so that each column shows as
// soon as its tier is explained. An explanation
// starts runtimes and compilers for seconds, so it takes a place in the run queue, as a
// run does, and runs in a worker process (runner.Explain) killed at its time limit, the
// server's limit of a cell with the warm-up and the profile on top (not minutes). Its
// answer is kept in front of the queue by (kernel, arguments, engine, profile, this
// binary's build); a refusal (a tier that could not be explained, the time limit) for
// explainRetry, then tried again.

const (
	// explainCached bounds the answers kept.
	explainCached = 256
	// explainRetry is how long a refusal is kept before a request tries again.
	explainRetry = 5 * time.Minute
)

// explainFunc explains one engine (runner.Explain).
type explainFunc func(ctx context.Context, k *kernels.Kernel, args []int, engine string, opts explain.Options, timeout time.Duration) (*explain.Report, error)

// explainCache holds the explanations made and under way.
type explainCache struct {
	mu      sync.Mutex
	entries map[string]*explainEntry
	oldest  []string // keys in the order they were added, for eviction
}

// explainEntry is one explanation, done or under way (its waiters share it).
type explainEntry struct {
	done chan struct{}
	rep  *explain.Report
	err  error // the queue's or the request's: never kept
	at   time.Time
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

func (s *Server) handleExplain(w http.ResponseWriter, r *http.Request) {
	k, args, eng, opts, aerr := s.explainRequest(r.URL.Query())
	if aerr != nil {
		writeError(w, http.StatusBadRequest, *aerr)
		return
	}
	key := fmt.Sprintf("%s %v %s %v %s", k.Name, args, eng, opts.Profile, binaryVersion())

	ent, fresh := s.explains.entry(key)
	if fresh {
		ent.rep, ent.err = s.queuedExplain(r.Context(), clientOf(r), k, args, eng, opts)
		s.explains.finish(key, ent)
		w.Header().Set("X-Explain-Cache", "miss")
	} else {
		select {
		case <-ent.done:
			w.Header().Set("X-Explain-Cache", "hit")
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case errors.As(ent.err, new(*queueFullError)), errors.Is(ent.err, errShuttingDown):
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusServiceUnavailable, apiError{Error: ent.err.Error()})
	case ent.err != nil:
		writeError(w, http.StatusInternalServerError, apiError{Error: withoutPaths(ent.err.Error())})
	default:
		answer := *ent.rep
		answer.Summary = explain.Summarize(&answer)
		b, err := json.Marshal(&answer)
		if err != nil {
			writeError(w, http.StatusInternalServerError, apiError{Error: "encode the explanation: " + err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, json.RawMessage(withoutPaths(string(b))))
	}
}

// explainRequest checks GET /api/explain's query: each parameter once, a kernel, an
// engine explain knows and this server offers, profile, and the kernel's arguments.
func (s *Server) explainRequest(q url.Values) (*kernels.Kernel, []int, string, explain.Options, *apiError) {
	var opts explain.Options
	bad := func(field string, err error) (*kernels.Kernel, []int, string, explain.Options, *apiError) {
		return nil, nil, "", opts, &apiError{Error: err.Error(), Field: field}
	}
	text := map[string]string{}
	// A repeated parameter was refused before this handler (Server.ServeHTTP).
	for name, vs := range q {
		if name != "kernel" && name != "engine" && name != "profile" {
			text[name] = vs[0]
		}
	}
	k, err := kernels.Lookup(q.Get("kernel"))
	if err != nil {
		return bad("kernel", err)
	}
	eng := q.Get("engine")
	if err := explain.CheckEngines([]string{eng}); err != nil {
		return bad("engine", err)
	}
	if eng != explain.Source && eng != explain.Wasm && !slices.Contains(s.engines, eng) {
		return bad("engine", fmt.Errorf("engine %s is not offered by this server: it offers %s", eng, strings.Join(s.engines, ", ")))
	}
	switch q.Get("profile") {
	case "", "0", "false":
	case "1", "true":
		opts.Profile = true
	default:
		return bad("profile", errors.New("profile must be 1 or 0"))
	}
	named, err := runner.ParseArgs(text)
	if err != nil {
		return nil, nil, "", opts, fieldAPIError(err)
	}
	args, err := k.Args(named)
	if err != nil {
		field := "args"
		var ae *kernels.ArgError
		if errors.As(err, &ae) {
			field = "args." + ae.Param
		}
		return bad(field, err)
	}
	return k, args, eng, opts, nil
}

// queuedExplain waits for a place in the run queue, as a run does (client's share), and explains the engine
// in a worker there.
func (s *Server) queuedExplain(ctx context.Context, client string, k *kernels.Kernel, args []int, eng string, opts explain.Options) (*explain.Report, error) {
	if !s.enter() {
		return nil, errShuttingDown
	}
	defer s.active.Done()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(s.closing, func() { cancel(errShuttingDown) })()
	t, err := s.queue.enter(client, measured)
	if err != nil {
		return nil, err
	}
	if err := t.wait(ctx, func(int) {}); err != nil {
		return nil, context.Cause(ctx)
	}
	defer t.release()
	rep, err := s.explain(ctx, k, args, eng, opts, runner.ExplainTimeout(s.limit(), opts))
	if err != nil && ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return rep, err
}

// entry returns the key's explanation, done or under way, or a new one to make (fresh),
// which the caller makes and finishes. A refusal kept longer than explainRetry is made
// afresh.
func (c *explainCache) entry(key string) (ent *explainEntry, fresh bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*explainEntry{}
	}
	if ent, ok := c.entries[key]; ok && !ent.stale() {
		return ent, false
	}
	ent = &explainEntry{done: make(chan struct{})}
	if _, ok := c.entries[key]; !ok {
		c.oldest = append(c.oldest, key)
	}
	c.entries[key] = ent
	if len(c.oldest) > explainCached {
		delete(c.entries, c.oldest[0])
		c.oldest = slices.Delete(c.oldest, 0, 1)
	}
	return ent, true
}

// finish marks ent done; an error (the queue's, the request's) is not kept.
func (c *explainCache) finish(key string, ent *explainEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ent.at = time.Now()
	if ent.err != nil && c.entries[key] == ent {
		delete(c.entries, key)
		c.oldest = slices.DeleteFunc(c.oldest, func(s string) bool { return s == key })
	}
	close(ent.done)
}

// stale says a finished refusal was kept longer than explainRetry (c.mu held).
func (e *explainEntry) stale() bool {
	select {
	case <-e.done:
	default:
		return false
	}
	refused := e.rep == nil || len(e.rep.Engines) == 0 || e.rep.Engines[0].Refused != ""
	return refused && time.Since(e.at) > explainRetry
}

// pathPrefixes are the directories whose names an answer never shows (this binary's, the
// caches', the temporary files', the home directory), longest first, each with the word
// that stands for it.
var pathPrefixes = sync.OnceValue(func() [][2]string {
	var out [][2]string
	add := func(dir, word string) {
		if dir != "" && dir != "/" {
			out = append(out, [2]string{filepath.Clean(dir) + "/", word + "/"})
		}
	}
	if exe, err := os.Executable(); err == nil {
		add(filepath.Dir(exe), "<bin>")
	}
	cache, _ := os.UserCacheDir()
	add(cache, "<cache>")
	add(os.TempDir(), "<tmp>")
	home, _ := os.UserHomeDir()
	add(home, "~")
	slices.SortFunc(out, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	return out
})

// withoutPaths replaces the server's own directories in s (an error, an explanation as
// JSON) by words: a visitor learns no path of the server's files.
func withoutPaths(s string) string {
	for _, p := range pathPrefixes() {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	return s
}
