package playground

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/headless"
)

// TestPagePeersInChromium: the page offers the engines in three groups, runs fib_rec(25)
// on the other languages and on kernels.wasm under Node (and wasmtime, in a binary built
// with -tags wasmtime), and shows each time beside native's, with its ratio to it.
func TestPagePeersInChromium(t *testing.T) { testPagePeers(t, headless.Chromium) }

// TestPagePeersInFirefox takes the same steps in headless Firefox.
func TestPagePeersInFirefox(t *testing.T) { testPagePeers(t, headless.Firefox) }

func testPagePeers(t *testing.T, kind headless.Kind) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser and every peer's runtime")
	}
	p := newBrowserPageIn(t, kind)
	engines := []string{"c", "java", "node-js", "php", "node-wasm"}
	switch err := engine.Known("wasmtime"); {
	case err == nil:
		engines = append(engines, "wasmtime")
	case wasmtimeTagged:
		t.Fatalf("built with -tags wasmtime, but the wasmtime engine is not registered: %v", err)
	}
	p.open("k=fib_rec&fib_rec.n=25&e=native," + strings.Join(engines, ",") + "&runs=3&warmup=1&warmup_ms=50")

	groups, err := evalAs[map[string][]string](p, `Object.fromEntries([...document.querySelectorAll("#engines-list .engine-group")].map(
		(g) => [g.querySelector(".engine-group-title").textContent, [...g.querySelectorAll("input")].map((i) => i.value)]))`)
	if err != nil {
		t.Fatal(err)
	}
	for engine, group := range map[string]string{
		"native": "Go tiers", "yaegi": "Go tiers", "node-wasm": "WebAssembly engines", "browser-wasm": "WebAssembly engines",
		"c": "Other languages", "java": "Other languages", "php": "Other languages", "browser-js": "Other languages",
	} {
		if !strings.Contains(","+strings.Join(groups[group], ",")+",", ","+engine+",") {
			t.Errorf("engine %s is not in the group %q: groups %v", engine, group, groups)
		}
	}

	p.runAll(5 * time.Minute)
	want := expected(t, "fib_rec", 25)
	if got := p.cell("fib_rec", "native"); got.State != "done" || got.Value != want {
		t.Fatalf("fib_rec(25) on native: %+v, want done with value %s", got, want)
	}
	for _, engine := range engines {
		got := p.cell("fib_rec", engine)
		if strings.Contains(got.Text, "not installed") && os.Getenv("PEERS_REQUIRED") != "1" {
			t.Logf("%s: %s (set PEERS_REQUIRED=1 to make this a failure)", engine, got.Text)
			continue
		}
		if got.State != "done" || got.Value != want || !strings.Contains(got.Text, "×") {
			t.Errorf("fib_rec(25) on %s: %+v, want done with value %s and its ratio to native", engine, got, want)
		}
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	p.screenshot("peers.png")
}

// wasmtimeTagged is true in a test binary built with -tags wasmtime (wasmtime_test.go):
// there the wasmtime engine must be on the page.
var wasmtimeTagged bool
