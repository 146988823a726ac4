package playground

import (
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/headless"
)

// TestPageCodeViewInChromium: a cell's details open its Code view (wazero's machine code of
// the kernel, explained by the server), and a two-tier comparison lines the tiers up at
// their loop heads.
func TestPageCodeViewInChromium(t *testing.T) { testPageCodeView(t, headless.Chromium) }

// TestPageCodeViewInFirefox shows the same view in headless Firefox.
func TestPageCodeViewInFirefox(t *testing.T) { testPageCodeView(t, headless.Firefox) }

func testPageCodeView(t *testing.T, kind headless.Kind) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser, a worker and an explanation")
	}
	p := newBrowserPageIn(t, kind)
	p.open("k=fib_it&fib_it.n=30&e=native,wazero-compiler&runs=3&warmup=1&warmup_ms=50")
	p.runAll(2 * time.Minute)

	// A cell's details → its Code.
	p.click(`#results-table tr[data-kernel="fib_it"] td[data-engine="wazero-compiler"]`)
	p.waitFor(`document.getElementById("details").open`, 5*time.Second, "the details dialog")
	p.click("#details .code-link")
	p.waitFor(`!document.getElementById("code-view").hidden && location.hash.startsWith("#code?")`, 5*time.Second, "the Code view")
	p.waitFor(`document.querySelector('.code-column[data-engine="wazero-compiler"]').dataset.state !== "loading"`, 3*time.Minute, "wazero's code")
	type column struct {
		State string `json:"state"`
		Stats string `json:"stats"`
		Rows  int    `json:"rows"`
		Head  int    `json:"head"`
		Text  string `json:"text"`
	}
	read := func(engine string) column {
		c, err := evalAs[column](p, `(() => {
			const col = document.querySelector('.code-column[data-engine="`+engine+`"]');
			const rows = [...col.querySelectorAll("table.code tbody tr")];
			return { state: col.dataset.state, stats: col.querySelector(".code-stats")?.textContent ?? "",
				rows: rows.length, head: rows.findIndex((tr) => tr.classList.contains("loop-head")), text: col.innerText.slice(0, 300) };
		})()`)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := read("wazero-compiler")
	if c.State != "done" || c.Rows < 10 || !strings.Contains(c.Stats, "instructions") || !strings.Contains(c.Stats, "per call") {
		t.Errorf("wazero's column: %+v, want its listing with the instruction count and the time per call", c)
	}

	// Two tiers side by side, aligned at their loop heads: the Go source and kernels.wasm.
	if err := p.eval(`location.hash = "#code?kernel=fib_it&n=30&engines=source,wasm"`, nil); err != nil {
		t.Fatal(err)
	}
	p.waitFor(`[...document.querySelectorAll(".code-column")].length === 2 && [...document.querySelectorAll(".code-column")].every((c) => c.dataset.state !== "loading")`, 2*time.Minute, "two tiers")
	src, wat := read("source"), read("wasm")
	if src.State != "done" || wat.State != "done" {
		t.Fatalf("columns: source %+v, wasm %+v", src, wat)
	}
	if src.Head < 0 || src.Head != wat.Head {
		t.Errorf("loop heads at rows %d (source) and %d (wasm): want one row, aligned", src.Head, wat.Head)
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	// Closing the view returns to the table.
	p.click("#code-view .close-code")
	p.waitFor(`document.getElementById("code-view").hidden`, 5*time.Second, "the view to close")
}
