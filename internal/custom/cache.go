package custom

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
)

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
	if size <= b.opts.MaxCache || !b.trimming.TryLock() {
		return
	}
	defer b.trimming.Unlock()
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
