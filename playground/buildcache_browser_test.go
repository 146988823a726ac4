package playground

import (
	"context"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/custom"
	"github.com/wasmgap/wasmgap/internal/headless"
)

// TestBuildCacheLineInChromium: while the server's build cache warm-up goes on (here it
// waits on a run in flight), one line beside Run says so; once it has ended, the line goes.
func TestBuildCacheLineInChromium(t *testing.T) { testBuildCacheLine(t, headless.Chromium) }

// TestBuildCacheLineInFirefox takes the same steps in headless Firefox.
func TestBuildCacheLineInFirefox(t *testing.T) { testBuildCacheLine(t, headless.Firefox) }

func testBuildCacheLine(t *testing.T, kind headless.Kind) {
	t.Parallel()
	if testing.Short() {
		t.Skip("drives a browser")
	}
	dist := distDir(t)
	b := custom.NewBuilder(custom.Options{Dir: t.TempDir()})
	b.RunStarted() // the warm-up waits for it and builds nothing
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	warmed := make(chan error, 1)
	go func() { warmed <- b.Warm(ctx) }()
	for deadline := time.Now().Add(time.Minute); !b.Warming(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the warm-up did not begin within a minute")
		}
	}
	ts := httptest.NewServer(New(Options{Dist: os.DirFS(dist), Custom: b}))
	defer ts.Close()
	p := openBrowser(t, kind, ts.URL, 1366)
	p.open("")
	line := `document.getElementById("build-cache")`
	if got, err := evalAs[string](p, line+`.hidden ? "" : `+line+`.innerText`); err != nil || got == "" {
		t.Errorf("the build cache line during the warm-up: %q (%v), want it shown", got, err)
	} else if one, _ := evalAs[bool](p, line+`.getClientRects().length === 1`); !one {
		t.Errorf("the build cache line %q is not one line", got)
	}
	cancel()
	<-warmed
	p.waitFor(line+`.hidden`, 30*time.Second, "the build cache line to go once the warm-up ended")
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
