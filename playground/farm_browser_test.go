package playground

import (
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/headless"
	"github.com/wasmgap/wasmgap/internal/results"
)

// TestFarmControlInChromium: on a server with a bench farm, the page's farm control sends
// the Run's plan (its server engines only) to the farm's agent, shows the agent's table
// filling, and links its stored run.
func TestFarmControlInChromium(t *testing.T) { testFarmControl(t, headless.Chromium) }

// TestFarmControlInFirefox takes the same steps in headless Firefox.
func TestFarmControlInFirefox(t *testing.T) { testFarmControl(t, headless.Firefox) }

func testFarmControl(t *testing.T, kind headless.Kind) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dist := distDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	store, farmOpts := farmOfOne(t, ctx)
	ts := httptest.NewServer(New(Options{Dist: os.DirFS(dist), Timeout: time.Minute, Results: store, Farm: farmOpts}))
	defer ts.Close()
	p := openBrowser(t, kind, ts.URL, 1400)

	// browser-js runs in the page: the farm's plan leaves it out, so that agent a, which
	// offers native alone, takes part.
	p.open("k=fib_it,fib_rec&fib_it.n=5&fib_rec.n=5&e=native,browser-js&runs=1&warmup=0&min_sample_ms=0&warmup_ms=0")
	p.waitFor(`document.getElementById("farm-run") !== null`, 10*time.Second, "the farm's control")
	p.click("#farm-run")
	p.waitFor(`document.querySelector('#farm-tables li[data-table="a"] a[href^="/runs/"]') !== null && document.getElementById("farm-status").textContent.startsWith("Done")`,
		3*time.Minute, "agent a's table, stored")
	line, err := p.text(`#farm-tables li[data-table="a"]`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, "2 of 2 cells") {
		t.Errorf("agent a's line %q; want its 2 of 2 cells", line)
	}
	list, err := store.List(ctx, results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].MachineName != "a" || len(list[0].Cells) != 2 {
		t.Errorf("stored runs %+v; want agent a's, with its 2 cells", list)
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}
