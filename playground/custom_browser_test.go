package playground

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/custom"
	"github.com/wasmgap/wasmgap/internal/headless"
)

// TestCustomKernelInChromium drives the "Your kernel" tab: the template edited into a
// sieve, built and run on every tier that runs user kernels, the table filled with equal
// values; then a syntax error marked in the editor.
func TestCustomKernelInChromium(t *testing.T) { testCustomKernel(t, headless.Chromium) }

// TestCustomKernelInFirefox takes the same steps in headless Firefox.
func TestCustomKernelInFirefox(t *testing.T) { testCustomKernel(t, headless.Firefox) }

func testCustomKernel(t *testing.T, kind headless.Kind) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds with the go command and drives a browser")
	}
	dist := distDir(t)
	dir := t.TempDir()
	b := custom.NewBuilder(custom.Options{Dir: dir, GoCache: filepath.Join(custom.DefaultDir(), "gocache")})
	if err := b.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(New(Options{Dist: os.DirFS(dist), Timeout: time.Minute, Custom: b}))
	defer ts.Close()
	p := openBrowser(t, kind, ts.URL, 1400)

	tiers := []string{"wazero-compiler", "wazero-interpreter", "yaegi", "browser-wasm"}
	p.open("e=native,browser-js," + strings.Join(tiers, ",") + "&runs=2&warmup=1&warmup_ms=50")
	p.click("#tab-custom")
	p.waitFor(`document.body.dataset.editor === "ready"`, 20*time.Second, "the editor")

	// Edit the template into the sieve: select all, type the new source.
	sieve := strings.Replace(sieveSource, "// Primes counts the primes below n.", "// Primes counts the primes below n with the sieve of Eratosthenes.", 1)
	typeSource := func(src string) {
		t.Helper()
		p.click("#editor .cm-content")
		p.edit(src)
	}
	typeSource(sieve)
	p.waitFor(`document.querySelector('input[name="custom.n"]') !== null`, 5*time.Second, "the argument n")
	p.fill(map[string]string{`input[name="custom.n"]`: "100000"})
	p.click("#run")
	p.waitFor(`document.body.dataset.built?.startsWith("custom-") && document.body.dataset.running === "0"`, 3*time.Minute, "the build and the runs")

	id := custom.ID([]byte(sieve))
	for _, e := range tiers {
		got := p.cell(id, e)
		if got.State != "done" || got.Value != "9592" || strings.Contains(got.Text, "wrong value") {
			t.Errorf("Primes(100000) on %s: %+v, want done with 9592", e, got)
		}
	}
	// The browser's worker takes samples as for the catalogue's kernels: k grown until a
	// sample lasts 10 ms (half of it at least), however long one sieve takes here.
	if k, median := p.sampleOf(id, "browser-wasm"); time.Duration(float64(k)*median) < 5*time.Millisecond {
		t.Errorf("Primes(100000) on browser-wasm: k = %d calls of %v, a sample under half the 10 ms minimum", k, time.Duration(median))
	}
	for _, e := range []string{"native", "browser-js"} {
		if got := p.cell(id, e); got.State != "missing" {
			t.Errorf("%s has a cell for a user kernel: %+v", e, got)
		}
	}
	// Only the tiers that run a user's kernel are ticked, the others off with why; each
	// cell shows the value the kernel returned.
	ticks, err := evalAs[[]string](p, `[...document.querySelectorAll('input[name="engine"]:checked')].map((i) => i.value)`)
	if err != nil || strings.Join(ticks, ",") != strings.Join(tiers, ",") {
		t.Errorf("ticked on the Your kernel tab: %v (%v), want %v", ticks, err, tiers)
	}
	if why, _ := p.text("#engines-note"); !strings.Contains(why, "articles' kernels only") {
		t.Errorf("the engines' note %q does not say why the others are off", why)
	}
	if got := p.cell(id, "wazero-compiler"); !strings.Contains(got.Text, "returned 9592") {
		t.Errorf("the cell %q does not show the value returned", got.Text)
	}
	label, err := p.text("#results-table tbody th code")
	if err != nil || label != "Primes(100000)" {
		t.Errorf("row label %q (%v), want Primes(100000)", label, err)
	}
	hash, err := evalAs[string](p, `location.hash`)
	if err != nil || !strings.HasPrefix(hash, "#custom=") {
		t.Errorf("location.hash = %q (%v): the source is not in the URL", hash, err)
	}

	// The link restores the source and the arguments.
	href, err := evalAs[string](p, `location.href`)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"about:blank", href} {
		if err := p.page.Navigate(p.bound(), u); err != nil {
			t.Fatal(err)
		}
	}
	p.waitFor(`document.body.dataset.editor === "ready" && document.querySelector("#editor .cm-content").innerText.includes("sieve of Eratosthenes")`, 20*time.Second, "the shared source in the editor")
	if n, err := evalAs[string](p, `document.querySelector('input[name="custom.n"]').value`); err != nil || n != "100000" {
		t.Errorf("shared n = %q (%v), want 100000", n, err)
	}

	// Format: the source as gofmt prints it, from the server.
	typeSource("package kernel\nfunc Twice(n int) int64 {return int64(2*n)}")
	p.click("#custom-format")
	p.waitFor(`document.querySelector("#editor .cm-content").innerText.includes("func Twice(n int) int64 { return int64(2 * n) }")`, 10*time.Second, "the formatted source")

	// Tiers that disagree are marked: a random value differs on each.
	typeSource("package kernel\n\nimport \"math/rand/v2\"\n\nfunc Dice(n int) int64 {\n\treturn rand.Int64N(1<<62) + int64(n)\n}\n")
	p.fill(map[string]string{"#runs": "1", "#warmup": "0", "#min_sample_ms": "0"})
	p.click("#run")
	p.waitFor(`document.body.dataset.built?.startsWith("custom-") && document.body.dataset.built !== "`+id+`" && document.body.dataset.running === "0"`, 2*time.Minute, "the dice's runs")
	dice := custom.ID([]byte("package kernel\n\nimport \"math/rand/v2\"\n\nfunc Dice(n int) int64 {\n\treturn rand.Int64N(1<<62) + int64(n)\n}\n"))
	if first := p.cell(dice, tiers[0]); first.State != "done" || strings.Contains(first.Text, "wrong value") {
		t.Errorf("the first tier: %+v, want its value", first)
	}
	// wazero gives its modules a deterministic random source, so its two tiers agree; yaegi
	// draws from Go's own; the browser's draws differ from call to call, which its harness
	// reports first.
	if got := p.cell(dice, "wazero-interpreter"); got.State != "done" || strings.Contains(got.Text, "wrong value") {
		t.Errorf("Dice on wazero-interpreter: %+v, want the compiler's value", got)
	}
	// min_sample_ms = 0 reaches the server's runs of a user kernel: one call per sample.
	for _, e := range []string{"wazero-compiler", "wazero-interpreter"} {
		if got := p.cell(dice, e); got.Calls != "1" {
			t.Errorf("Dice on %s with min_sample_ms = 0: %+v, want k = 1", e, got)
		}
	}
	// A mismatch and a wrong result read alike in the table ("wrong value"); the whole
	// text is in the details.
	if got := p.cell(dice, "yaegi"); got.Text != "wrong value" {
		t.Errorf("Dice on yaegi: %+v, want a mismatch, read as wrong value", got)
	}
	if got := p.cell(dice, "browser-wasm"); got.Text != "wrong value" {
		t.Errorf("Dice on browser-wasm: %+v, want a mismatch or a wrong result, read as wrong value", got)
	}

	// A kernel whose first calls are slow (as fresh memory or a JIT's first tier make them)
	// leaves calibration at k = 1 when no warm-up absorbs them; the samples start over with
	// a k that fills the sample's minimum, in the browser's worker as on the server. What
	// k that is depends on this machine's speed; what the harness promises does not: its
	// samples last at least half the minimum (shorter ones start the samples over with a
	// larger k), so k times the median call fills 5 ms whatever the speed; k = 1 (the
	// calibration's) with warm calls under 5 ms fails it.
	const minSample = 10 * time.Millisecond
	// Only the two tiers checked below run it: at the size whose first calls outlast the
	// sample's minimum on a compiled tier, the interpreters would spend a minute on them.
	if err := p.eval(`["wazero-interpreter", "yaegi"].forEach((e) => document.querySelector('input[name="engine"][value="' + e + '"]').click())`, nil); err != nil {
		t.Fatal(err)
	}
	typeSource(warmingSource)
	p.waitFor(`document.querySelector('input[name="custom.n"]') !== null`, 5*time.Second, "the argument n")
	p.fill(map[string]string{"#runs": "6", "#warmup": "0", "#min_sample_ms": strconv.Itoa(int(minSample / time.Millisecond)), `input[name="custom.n"]`: "200000"})
	p.click("#run")
	warming := custom.ID([]byte(warmingSource))
	p.waitFor(`document.body.dataset.built === "`+warming+`" && document.body.dataset.running === "0"`, 2*time.Minute, "the warming kernel's runs")
	for _, e := range []string{"wazero-interpreter", "yaegi"} {
		if got := p.cell(warming, e); got.State != "missing" {
			t.Errorf("Warming on %s, unchecked: %+v, want no cell", e, got)
		}
	}
	for _, e := range []string{"browser-wasm", "wazero-compiler"} {
		k, median := p.sampleOf(warming, e)
		if sample := time.Duration(float64(k) * median); sample < minSample/2 {
			t.Errorf("Warming on %s: k = %d calls of %v make a %v sample, under half the %v minimum: k did not grow to fill the sample", e, k, time.Duration(median), sample, minSample)
		}
	}

	// A syntax error is marked on its line.
	typeSource("package kernel\n\nfunc Broken(n int) int64 {\n\treturn n +\n}\n")
	p.click("#custom-build")
	p.waitFor(`document.querySelector("#editor .cm-lint-marker-error") !== null`, 20*time.Second, "the error mark")
	status, err := p.text("#custom-status")
	if err != nil || !strings.Contains(status, "5:1: syntax error") {
		t.Errorf("status %q (%v), want the syntax error at 5:1", status, err)
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %s", strings.Join(errs, "\n"))
	}
}

// warmingSource is a user kernel whose first five calls do a hundred times the work of
// the later ones, returning the same value.
const warmingSource = `package kernel

var calls int

// Warming sums n values, a hundred times over in its first five calls.
func Warming(n int) int64 {
	calls++
	rounds := 1
	if calls <= 5 {
		rounds = 100
	}
	var s int64
	for r := 0; r < rounds; r++ {
		for i := 0; i < n; i++ {
			s += int64(i ^ r)
		}
	}
	if s < 0 {
		return -1
	}
	return int64(n)
}
`

// sampleOf reads a done cell's k (calls a sample, as its details give it) and its median
// time per call in ns; a cell that is not done fails the test.
func (p *browserPage) sampleOf(kernel, engine string) (k int, medianNs float64) {
	p.t.Helper()
	got := p.cell(kernel, engine)
	if got.State != "done" {
		p.t.Fatalf("%s on %s: %+v, want a done cell", kernel, engine, got)
	}
	k, err := strconv.Atoi(got.Calls)
	if err != nil || k < 1 {
		p.t.Fatalf("%s on %s: %+v names no k", kernel, engine, got)
	}
	median, err := evalAs[float64](p, fmt.Sprintf(`Number(document.querySelector('#results-table tr[data-kernel=%q] td[data-engine=%q] .median').dataset.ns)`, kernel, engine))
	if err != nil || median <= 0 {
		p.t.Fatalf("%s on %s: the median's ns %v (%v)", kernel, engine, median, err)
	}
	return k, median
}
