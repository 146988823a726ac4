// Package browsertest starts the headless browsers that the project's browser tests drive,
// the same way for every package: Chromium with chromedp (Start, for the tests that use
// chromedp's own actions), or either browser behind package internal/headless's
// browser-neutral Page (Open: navigate, evaluate JavaScript with await, console errors,
// the viewport), which the tests that run in both Chromium and Firefox use; Open's Firefox
// pages are windows of one Firefox per test process, each in a user context of its own. A
// browser test skips where its browser is not installed, except in CI (CI set, or
// PEERS_REQUIRED=1 as .ci/run sets it with every runtime and both browsers installed),
// where it fails, because there browser tests must run.
package browsertest

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wasmgap/wasmgap/internal/headless"
)

// Kinds are the browsers the tests run in, in order.
func Kinds() []headless.Kind { return headless.Kinds() }

// need skips the test when the browser is missing, or fails it in CI.
func need(t testing.TB, kind headless.Kind) string {
	t.Helper()
	p, err := headless.Path(kind)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" || os.Getenv("PEERS_REQUIRED") == "1" {
		t.Fatalf("%v, and CI or PEERS_REQUIRED=1 is set: the browser tests must run", err)
	}
	t.Skipf("%v; set CI=true or PEERS_REQUIRED=1 to make this a failure", err)
	return ""
}

// Path returns the Chromium executable; without one it skips the test, or fails it in CI.
func Path(t testing.TB) string {
	t.Helper()
	return need(t, headless.Chromium)
}

// Start launches a fresh headless Chromium (its own profile, no network of its own: the
// machines that run these tests reach only loopback) and returns its first tab's context.
// The browser is closed when the test ends. extra adds options, such as a window size.
func Start(t testing.TB, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append(headless.ChromiumFlags(Path(t), t.TempDir()), extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// Open returns a page of the browser, closed when the test ends. In Chromium it is a
// browser of its own, started headless with a fresh profile (chromium adds Chromium's
// flags: a window size). In Firefox it is a new window, in a user context of its own (its
// cookies and storage apart, as a fresh profile's), of one Firefox that the test process
// shares: a Firefox takes about 2.5 s and as much CPU to start, against Chromium's 0.7 s.
func Open(t testing.TB, kind headless.Kind, chromium ...chromedp.ExecAllocatorOption) headless.Page {
	t.Helper()
	need(t, kind)
	var p headless.Page
	var err error
	if kind == headless.Firefox {
		p, err = firefoxWindow()
	} else {
		p, err = headless.Start(context.Background(), kind, headless.Options{Dir: t.TempDir(), ChromiumFlags: chromium})
	}
	if err != nil {
		t.Fatalf("start %s: %v", kind, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// shared is the test process's Firefox, started on first use; its process group ends with
// the process (internal/childproc), and its profile, in the process's folder of profiles,
// is removed by the next headless.Start once the process has ended.
var shared struct {
	mu      sync.Mutex
	firefox headless.Page
}

// firefoxWindow opens a window of the shared Firefox, starting it first, or again when it
// has ended (a window it cannot open).
func firefoxWindow() (headless.Page, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	// The start and the window are bounded by headless's own limits, which a busy machine
	// stretches (a fixed minute here failed the tests of a machine at load 20).
	ctx := context.Background()
	if shared.firefox != nil {
		if w, err := headless.OpenWindow(ctx, shared.firefox); err == nil {
			return w, nil
		}
		shared.firefox.Close()
		shared.firefox = nil
	}
	f, err := headless.Start(ctx, headless.Firefox, headless.Options{})
	if err != nil {
		return nil, err
	}
	shared.firefox = f
	return headless.OpenWindow(ctx, f)
}
