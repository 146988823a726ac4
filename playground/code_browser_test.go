package playground

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/explain"
	"github.com/wasmgap/wasmgap/internal/headless"
	"github.com/wasmgap/wasmgap/kernels"
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
	read := func(engine string) codeColumn { return p.codeColumn(engine) }
	c := read("wazero-compiler")
	if c.State != "done" || c.Rows < 10 || !strings.Contains(c.Stats, "instructions") || !strings.Contains(c.Stats, "per call") {
		t.Errorf("wazero's column: %+v, want its listing with the instruction count and the time per call", c)
	}

	// Two tiers side by side, their loop heads at one height: the Go source and kernels.wasm.
	if err := p.eval(`location.hash = "#code?kernel=fib_it&n=30&engines=source,wasm"`, nil); err != nil {
		t.Fatal(err)
	}
	p.waitFor(`[...document.querySelectorAll(".code-column")].length === 2 && [...document.querySelectorAll(".code-column")].every((c) => c.dataset.state !== "loading")`, 2*time.Minute, "two tiers")
	src, wat := read("source"), read("wasm")
	if src.State != "done" || wat.State != "done" {
		t.Fatalf("columns: source %+v, wasm %+v", src, wat)
	}
	if !src.AnchorInView || !wat.AnchorInView || math.Abs(src.AnchorTop-wat.AnchorTop) > src.RowHeight {
		t.Errorf("loop heads at %.0f px (source, in view %v) and %.0f px (wasm, in view %v): want both in view, one row apart at most (%.0f px)",
			src.AnchorTop, src.AnchorInView, wat.AnchorTop, wat.AnchorInView, src.RowHeight)
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	// Closing the view returns to the table.
	p.click("#code-view .close-code")
	p.waitFor(`document.getElementById("code-view").hidden`, 5*time.Second, "the view to close")
}

// codeColumn is what a test reads of one column of the Code view.
type codeColumn struct {
	State string `json:"state"`
	Stats string `json:"stats"`
	Rows  int    `json:"rows"`
	Text  string `json:"text"`
	// Lines is the column's line about its Go lines; Mapped says its rows carry them.
	Lines  string `json:"lines"`
	Mapped bool   `json:"mapped"`
	// Selected counts the rows of the selected Go line.
	Selected int `json:"selected"`
	// AnchorTop is where the aligned row (the first recursive call, else the first loop
	// head) is on screen; AnchorInView says it is inside its column's box and the window.
	AnchorTop    float64 `json:"anchorTop"`
	AnchorInView bool    `json:"anchorInView"`
	RowHeight    float64 `json:"rowHeight"`
	// Shown says the column is displayed (one at a time at phone widths).
	Shown bool `json:"shown"`
}

func (p *browserPage) codeColumn(engine string) codeColumn {
	p.t.Helper()
	c, err := evalAs[codeColumn](p, `(() => {
		const col = document.querySelector('.code-column[data-engine="`+engine+`"]');
		const rows = [...col.querySelectorAll("table.code tbody tr")];
		const anchor = rows.find((tr) => tr.classList.contains("recursive")) ?? rows.find((tr) => tr.classList.contains("loop-head"));
		const box = col.querySelector(".code-scroll");
		const a = anchor?.getBoundingClientRect(), b = box?.getBoundingClientRect();
		return { state: col.dataset.state, stats: col.querySelector(".code-stats")?.textContent ?? "",
			rows: rows.length, text: col.innerText.slice(0, 300),
			lines: col.querySelector(".code-lines")?.textContent ?? "", mapped: col.querySelector(".code-lines")?.dataset.mapped === "true",
			selected: col.querySelectorAll("tr.line-selected").length,
			anchorTop: a?.top ?? -1, rowHeight: a?.height ?? 0,
			anchorInView: !!a && !!b && a.height > 0 && a.top >= b.top && a.bottom <= b.bottom && a.bottom <= innerHeight,
			shown: col.offsetParent !== null };
	})()`)
	if err != nil {
		p.t.Fatal(err)
	}
	return c
}

// TestPageCodeCompareInChromium: a compare of native and wazero-compiler for fib_it shows
// native's column while wazero's explanation is held, opens each column at its aligned
// point, lights the loop's Go line in the columns that map it (and says so in wazero's),
// and at 390 px shows one tier at a time with nothing scrolling sideways outside a column.
func TestPageCodeCompareInChromium(t *testing.T) { testPageCodeCompare(t, headless.Chromium) }

// TestPageCodeCompareInFirefox takes the same steps in headless Firefox.
func TestPageCodeCompareInFirefox(t *testing.T) { testPageCodeCompare(t, headless.Firefox) }

func testPageCodeCompare(t *testing.T, kind headless.Kind) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser and explanations in workers")
	}
	p := newBrowserPageIn(t, kind)
	// wazero's explanation waits until the test lets it go: the order of arrival is
	// asserted by what the page shows meanwhile, not by a time.
	release := make(chan struct{})
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	t.Cleanup(let)
	// Four slots, so that the held explanation takes one of this address's two and
	// native's the other (with two, an address runs one at a time: the held one first
	// would keep native waiting).
	p.srv.queue = newQueue(4, defaultMaxQueued)
	explainer := p.srv.explain
	p.srv.explain = func(ctx context.Context, k *kernels.Kernel, args []int, eng string, opts explain.Options, timeout time.Duration) (*explain.Report, error) {
		if eng == "node-wasm" { // its order of asking is what is looked at, not its code
			return &explain.Report{Kernel: k.Name, Args: args, Engines: []explain.Explanation{{Engine: eng, Refused: "not explained in this test"}}}, nil
		}
		if eng == "wazero-compiler" {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return explainer(ctx, k, args, eng, opts, timeout)
	}
	p.open("")
	if err := p.eval(`location.hash = "#code?kernel=fib_it&n=40&engines=native,wazero-compiler"`, nil); err != nil {
		t.Fatal(err)
	}
	col := `document.querySelector('.code-column[data-engine="%s"]').dataset.state`
	p.waitFor(fmt.Sprintf(col, "native")+` === "done"`, 2*time.Minute, "native's column")
	native, wz := p.codeColumn("native"), p.codeColumn("wazero-compiler")
	if wz.State != "loading" || strings.Contains(wz.Text, "JIT") {
		t.Errorf("wazero's column while it is held: %+v, want it waiting, with no JIT's warm-up message (wazero compiles ahead of time)", wz)
	}
	if native.Rows < 5 || !native.AnchorInView || !native.Mapped {
		t.Errorf("native's column before wazero's: %+v, want its listing, its loop head in view, its Go lines", native)
	}
	let()
	p.waitFor(fmt.Sprintf(col, "wazero-compiler")+` !== "loading"`, 2*time.Minute, "wazero's column")
	native, wz = p.codeColumn("native"), p.codeColumn("wazero-compiler")
	if wz.State != "done" || !wz.AnchorInView || !native.AnchorInView || math.Abs(native.AnchorTop-wz.AnchorTop) > native.RowHeight {
		t.Errorf("aligned points: native %+v, wazero %+v: want both in view, one row apart at most", native, wz)
	}
	if wz.Mapped || !strings.Contains(wz.Lines, "no line table") {
		t.Errorf("wazero's line about Go lines: %q (mapped %v), want it to say it has no line table", wz.Lines, wz.Mapped)
	}
	summary, err := p.text(".code-summary")
	if err != nil || !strings.Contains(summary, "instructions") || !strings.Contains(summary, "jump table") {
		t.Errorf("the summary in words: %q (%v), want each tier's instructions, wazero's jump table among them", summary, err)
	}

	// The loop's Go line, selected in native's column (its loop head's line).
	p.click(`.code-column[data-engine="native"] tr.loop-head[data-line]`)
	if n := p.codeColumn("native"); n.Selected < 1 {
		t.Errorf("native's rows of the selected line: %d, want at least 1", n.Selected)
	}
	// With the source beside them, selecting its loop line lights native's instructions of it.
	if err := p.eval(`location.hash = "#code?kernel=fib_it&n=40&engines=native,wazero-compiler,source"`, nil); err != nil {
		t.Fatal(err)
	}
	p.waitFor(`[...document.querySelectorAll(".code-column")].length === 3 && [...document.querySelectorAll(".code-column")].every((c) => c.dataset.state === "done")`, 2*time.Minute, "three tiers")
	p.click(`.code-column[data-engine="source"] tr.loop-head[data-line]`)
	if n, src := p.codeColumn("native"), p.codeColumn("source"); n.Selected < 1 || src.Selected != 1 {
		t.Errorf("the source's loop line selected: %d of native's rows lit and %d of the source's, want at least 1 and 1", n.Selected, src.Selected)
	}

	for _, width := range []int{1920, 1366, 390} {
		if err := p.page.SetViewport(p.bound(), width, 1000); err != nil {
			t.Fatal(err)
		}
		p.waitFor(fmt.Sprintf("innerWidth === %d", width), 10*time.Second, "the new width")
		type fit struct {
			Page, PageClient, View, ViewClient, Shown int
		}
		f, err := evalAs[fit](p, `(() => { const v = document.getElementById("code-view"); return {
			Page: document.documentElement.scrollWidth, PageClient: document.documentElement.clientWidth,
			View: v.scrollWidth, ViewClient: v.clientWidth,
			Shown: [...document.querySelectorAll(".code-column")].filter((c) => c.offsetParent !== null).length }; })()`)
		if err != nil {
			t.Fatal(err)
		}
		if f.Page > f.PageClient+1 || f.View > f.ViewClient+1 {
			t.Errorf("at %d px something scrolls sideways outside a column: page %d px in %d, view %d px in %d", width, f.Page, f.PageClient, f.View, f.ViewClient)
		}
		if want := map[bool]int{true: 1, false: 3}[width < 700]; f.Shown != want {
			t.Errorf("at %d px %d columns shown, want %d", width, f.Shown, want)
		}
		if width < 700 {
			// The switcher's second tier: shown alone, at its aligned point.
			p.click(".code-switch button:nth-child(2)")
			if c := p.codeColumn("wazero-compiler"); !c.Shown || !c.AnchorInView {
				t.Errorf("at %d px wazero's column after the switch: %+v, want it shown with its aligned point in view", width, c)
			}
		}
		if png, err := headless.Screenshot(p.bound(), p.page); err == nil {
			t.Logf("the view at %d px: %s", width, writeArtifact(t, fmt.Sprintf("code-%s-%d.png", kind, width), png))
		} else {
			t.Errorf("screenshot at %d px: %v", width, err)
		}
	}

	// A JIT is asked for once the quick tiers have answered (they share the address's
	// places in the queue): node-wasm's request starts after native's answer ended, by
	// the browser's own record of its requests.
	if slices.Contains(p.srv.engines, "node-wasm") {
		if err := p.eval(`(performance.clearResourceTimings(), location.hash = "#code?kernel=fib_it&n=41&engines=node-wasm,native")`, nil); err != nil {
			t.Fatal(err)
		}
		p.waitFor(`[...document.querySelectorAll(".code-column")].every((c) => c.dataset.state !== "loading")`, 2*time.Minute, "node-wasm and native")
		type asked struct{ JITStart, NativeEnd float64 }
		a, err := evalAs[asked](p, `(() => {
			const r = performance.getEntriesByType("resource").filter((e) => e.name.includes("/api/explain?") && e.name.includes("n=41"));
			const of = (e) => r.find((x) => new URL(x.name).searchParams.get("engine") === e);
			return { JITStart: of("node-wasm")?.startTime ?? -1, NativeEnd: of("native")?.responseEnd ?? -1 };
		})()`)
		if err != nil {
			t.Fatal(err)
		}
		if a.JITStart < 0 || a.NativeEnd < 0 || a.JITStart < a.NativeEnd {
			t.Errorf("node-wasm asked at %.1f ms, native's answer ended at %.1f ms: want the JIT asked after the quick tier answered", a.JITStart, a.NativeEnd)
		}
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}
