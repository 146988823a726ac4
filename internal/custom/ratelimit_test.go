//go:build unix

package custom

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeGo is a go command for the builder's scheduling and storage tests: it writes the
// output (-o NAME) and a Go cache entry, of "// SIZE n" bytes (100 by default), after
// waiting for the file "// BLOCK path" names, when the source has these lines.
const fakeGo = `#!/bin/sh
out=kernel.wasm
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
block=$(sed -n 's,^// BLOCK ,,p' kernel/kernel.go)
if [ -n "$block" ]; then while [ ! -e "$block" ]; do sleep 0.02; done; fi
size=$(sed -n 's,^// SIZE ,,p' kernel/kernel.go)
head -c "${size:-100}" /dev/zero > "$out"
sum=$(cksum kernel/kernel.go | cut -d' ' -f1)
mkdir -p "$GOCACHE/aa" && head -c "${size:-100}" /dev/zero > "$GOCACHE/aa/$sum-d"
`

func fakeBuilder(t *testing.T, opts Options) *Builder {
	t.Helper()
	dir := t.TempDir()
	goBin := filepath.Join(dir, "go")
	if err := os.WriteFile(goBin, []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	opts.Dir, opts.Go = filepath.Join(dir, "builds"), goBin
	return NewBuilder(opts)
}

func fakeSource(name string, lines ...string) []byte {
	return []byte(strings.Join(lines, "\n") + "\npackage kernel\n\nfunc " + name + "(n int) int64 { return int64(n) }\n")
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the condition did not come within 30 s")
		}
	}
}

// A client may start BuildsPerMinute builds a minute; a source built before does not
// count, and another client has its own rate.
func TestBuildRate(t *testing.T) {
	b := fakeBuilder(t, Options{BuildsPerMinute: 2})
	ctx := context.Background()
	for i, name := range []string{"A", "B"} {
		if _, err := b.BuildFor(ctx, "a", fakeSource(name)); err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
	}
	if k, err := b.BuildFor(ctx, "a", fakeSource("A")); err != nil || !k.Cached {
		t.Errorf("a cached build over the rate = %+v, %v: want the build", k, err)
	}
	var rateErr *RateError
	if _, err := b.BuildFor(ctx, "a", fakeSource("C")); !errors.As(err, &rateErr) || !strings.Contains(err.Error(), "at most 2 a minute") {
		t.Errorf("a's third build = %v, want a RateError", err)
	}
	if _, err := b.BuildFor(ctx, "b", fakeSource("C")); err != nil {
		t.Errorf("b's build = %v", err)
	}
}

// A module over MaxModule is refused (and the refusal kept, not the module); the stored
// builds stay under MaxCache, the least recently used going first; the Go cache's growth
// beyond its warm files is removed once over MaxCache.
func TestBuildCacheBounded(t *testing.T) {
	b := fakeBuilder(t, Options{MaxModule: 4000, MaxCache: 5000})
	ctx := context.Background()
	_, err := b.BuildFor(ctx, "a", fakeSource("Huge", "// SIZE 4001"))
	var errs Errors
	if !errors.As(err, &errs) || !strings.Contains(err.Error(), "at most 0 MiB") && !strings.Contains(err.Error(), "the built module is") {
		t.Fatalf("a module over the cap = %v, want Errors", err)
	}
	if _, err := b.BuildFor(ctx, "a", fakeSource("Huge", "// SIZE 4001")); !errors.As(err, &errs) {
		t.Errorf("the same source again = %v, want the kept refusal", err)
	}
	var ks []*Kernel
	for _, name := range []string{"K1", "K2", "K3", "K4"} {
		k, err := b.BuildFor(ctx, name, fakeSource(name, "// SIZE 1500"))
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
		time.Sleep(20 * time.Millisecond) // distinct use times
		if name == "K2" {
			if _, err := b.Lookup(ks[0].ID); err != nil { // K1 used again: K2 is older
				t.Fatal(err)
			}
		}
	}
	if got := treeSize(filepath.Join(b.opts.Dir, "builds")); got > 5000 {
		t.Errorf("the stored builds take %d bytes, over MaxCache (5000)", got)
	}
	if _, err := b.Lookup(ks[0].ID); err != nil {
		t.Errorf("K1, used last but two, was evicted: %v", err)
	}
	if _, err := b.Lookup(ks[1].ID); err == nil {
		t.Error("K2, the least recently used, is still stored")
	}
	if _, err := b.Lookup(ks[3].ID); err != nil {
		t.Errorf("K4, just built, was evicted: %v", err)
	}
	var extra int64
	for p := range warmSet(b.opts.GoCache) {
		if !b.warm[p] {
			st, _ := os.Stat(p)
			extra += st.Size()
		}
	}
	if extra > 5000 {
		t.Errorf("builds added %d bytes to the Go cache, over MaxCache (5000)", extra)
	}
	if len(b.warm) == 0 {
		t.Fatal("no warm files recorded")
	}
	for p := range b.warm {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("a warm file of the Go cache was removed: %v", err)
		}
	}
}
