package custom

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of the limits on builds (Options).
const (
	// DefaultMaxModule bounds a built module: kernels of the page's size make 2–4 MB.
	DefaultMaxModule = 32 << 20
	// DefaultMaxCache bounds the stored builds, and separately what user builds add to
	// the Go build cache beyond the warm standard library.
	DefaultMaxCache = 1 << 30
	// DefaultBuildsPerMinute is how many builds (not cached) one client may start a minute.
	DefaultBuildsPerMinute = 30
	// DefaultMaxWait bounds how long a build waits for its turn.
	DefaultMaxWait = 15 * time.Second
)

// BusyError is a build refused because no turn came within Options.MaxWait: the server
// is busy with other builds (or with this client's own). Retry after RetryAfter.
type BusyError struct {
	Msg        string
	RetryAfter time.Duration
}

func (e *BusyError) Error() string { return e.Msg }

// buildLimiter is the builder's rate limiting of builds: slots for the machine, a fair
// share of them per client, a rate per client (buildrate.go). (It has nothing to do with
// sharing results: that is the playground's POST /api/results/share.)
type buildLimiter struct {
	mu   sync.Mutex
	held map[string]int // builds per client, waiting or running
	rate buildRate
	// trimming excludes builds while the Go cache is trimmed.
	trimming sync.RWMutex
}

// turn waits, at most Options.MaxWait, until client is under its share (Options.PerClient
// builds at a time) and a slot is free, and returns the function that gives both back.
func (b *Builder) turn(ctx context.Context, client string) (func(), error) {
	s := &b.limiter
	busy := func(why string) error {
		return &BusyError{Msg: fmt.Sprintf("the server is busy building %s: no turn came within %v; try again in a few seconds", why, b.opts.MaxWait), RetryAfter: b.opts.MaxWait / 2}
	}
	deadline := time.NewTimer(b.opts.MaxWait)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		if s.held == nil {
			s.held = map[string]int{}
		}
		if s.held[client] < b.opts.PerClient {
			s.held[client]++
			s.mu.Unlock()
			break
		}
		s.mu.Unlock()
		// This client's own builds take its share: wait for one of them to end.
		select {
		case <-tick.C:
		case <-deadline.C:
			return nil, busy(fmt.Sprintf("this client's other kernels (at most %d at a time)", b.opts.PerClient))
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	leave := func() {
		s.mu.Lock()
		if s.held[client]--; s.held[client] <= 0 {
			delete(s.held, client)
		}
		s.mu.Unlock()
	}
	select {
	case b.slots <- struct{}{}:
	case <-deadline.C:
		leave()
		return nil, busy("other clients' kernels")
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
	s.trimming.RLock()
	return func() { s.trimming.RUnlock(); <-b.slots; leave() }, nil
}

// touch marks a stored build as used, for the cache's least-recently-used order.
func touch(dir string) {
	now := time.Now()
	_ = os.Chtimes(filepath.Join(dir, "record.json"), now, now)
}

// evict removes the least recently used builds until the stored builds take at most
// Options.MaxCache, keeping keep (the build just stored).
func (b *Builder) evict(keep string) {
	root := filepath.Join(b.opts.Dir, "builds")
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	type build struct {
		dir  string
		used time.Time
		size int64
	}
	var all []build
	var total int64
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		st, err := os.Stat(filepath.Join(dir, "record.json"))
		if err != nil {
			continue // being stored
		}
		size := treeSize(dir)
		total += size
		all = append(all, build{dir, st.ModTime(), size})
	}
	slices.SortFunc(all, func(a, b build) int { return a.used.Compare(b.used) })
	for _, old := range all {
		if total <= b.opts.MaxCache {
			break
		}
		if old.dir == keep {
			continue
		}
		if os.RemoveAll(old.dir) == nil {
			total -= old.size
		}
	}
}

// treeSize is the bytes of the files under dir.
func treeSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// warmSet lists the files of the Go build cache once warm: the standard library, which
// trimming keeps.
func warmSet(goCache string) map[string]bool {
	set := map[string]bool{}
	_ = filepath.WalkDir(goCache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			set[p] = true
		}
		return nil
	})
	return set
}

// trimGoCache removes what builds added to the Go build cache beyond the warm set, when
// that exceeds Options.MaxCache, and when no build runs (the go command of a running
// build may be about to read an entry).
func (b *Builder) trimGoCache() {
	if b.warm == nil {
		return
	}
	var extra []string
	var size int64
	_ = filepath.WalkDir(b.opts.GoCache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !b.warm[p] {
			if info, err := d.Info(); err == nil {
				extra = append(extra, p)
				size += info.Size()
			}
		}
		return nil
	})
	if size <= b.opts.MaxCache || !b.limiter.trimming.TryLock() {
		return
	}
	defer b.limiter.trimming.Unlock()
	for _, p := range extra {
		// Only entries: the cache's own files (README, trim.txt) stay.
		if strings.HasSuffix(p, "-a") || strings.HasSuffix(p, "-d") {
			_ = os.Remove(p)
		}
	}
}

// errModule is the refusal of a module over Options.MaxModule.
func (b *Builder) errModule(size int64) Errors {
	return Errors{{Msg: fmt.Sprintf("the built module is %d MiB: at most %d MiB are allowed (large arrays, composite literals or constant strings make large modules)", size>>20, b.opts.MaxModule>>20)}}
}

var errNoClient = errors.New("no client")
