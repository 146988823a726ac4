package playground

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/headless"
	"github.com/wasmgap/wasmgap/internal/report"
)

// TestPageJITViewInChromium: with every JIT on / off pair selected, the page's JIT view
// shows, for fib_rec(25), each runtime's interpreter time, its JIT time and the ratio.
func TestPageJITViewInChromium(t *testing.T) { testPageJITView(t, headless.Chromium) }

// TestPageJITViewInFirefox shows the same view in headless Firefox.
func TestPageJITViewInFirefox(t *testing.T) { testPageJITView(t, headless.Firefox) }

func testPageJITView(t *testing.T, kind headless.Kind) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser and every runtime")
	}
	pairs := report.JITPairs()
	var engines []string
	for _, p := range pairs {
		engines = append(engines, p.Interpreter, p.JIT)
	}
	if len(pairs) < 8 {
		t.Fatalf("JITPairs() = %+v: want the pairs of wazero, Go, V8's wasm, Java, V8's JavaScript, LuaJIT, Python and PHP", pairs)
	}
	p := newBrowserPageIn(t, kind)
	p.open("k=fib_rec&fib_rec.n=25&e=" + strings.Join(engines, ",") + "&runs=3&warmup=1&warmup_ms=50")
	p.runAll(10 * time.Minute)

	type row struct {
		Runtime string   `json:"runtime"`
		Cells   []string `json:"cells"`
	}
	rows, err := evalAs[[]row](p, `[...document.querySelectorAll("#jit-table tbody tr")]
		.filter((tr) => tr.dataset.kernel === "fib_rec(25)")
		.map((tr) => ({ runtime: tr.dataset.runtime, cells: [...tr.querySelectorAll("td")].map((td) => td.textContent) }))`)
	if err != nil {
		t.Fatal(err)
	}
	byRuntime := map[string][]string{}
	for _, r := range rows {
		byRuntime[r.Runtime] = r.Cells
	}
	for _, pair := range pairs {
		cells, ok := byRuntime[pair.Runtime]
		if !ok {
			t.Errorf("the JIT view has no fib_rec(25) row for %s: rows %v", pair.Runtime, rows)
			continue
		}
		// kernel, runtime, interpreter, time, JIT, time, ratio
		if len(cells) != 7 {
			t.Errorf("%s: cells %q", pair.Runtime, cells)
			continue
		}
		if strings.Contains(cells[3]+cells[5], "not installed") && os.Getenv("PEERS_REQUIRED") != "1" {
			t.Logf("%s: %q (set PEERS_REQUIRED=1 to make this a failure)", pair.Runtime, cells)
			continue
		}
		if !strings.HasSuffix(cells[3], "s") || !strings.HasSuffix(cells[5], "s") || !strings.HasPrefix(cells[6], "×") {
			t.Errorf("%s: cells %q, want both times and the ratio", pair.Runtime, cells)
		}
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	p.screenshot("jit.png")
}
