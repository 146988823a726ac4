package playground

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/headless"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
)

// TestResultsTabSetsMachinesSideBySideInChromium: two stored runs of one plan, each from
// a farm's agent, are set side by side in the Results tab: a column per machine, named
// by its agent, with each engine's ×native on that machine and the spread across them.
func TestResultsTabSetsMachinesSideBySideInChromium(t *testing.T) {
	testMachinesSideBySide(t, headless.Chromium)
}

// TestResultsTabSetsMachinesSideBySideInFirefox takes the same steps in headless Firefox.
func TestResultsTabSetsMachinesSideBySideInFirefox(t *testing.T) {
	testMachinesSideBySide(t, headless.Firefox)
}

// storeMachineRuns stores a run of fib_it(30) on native and wazero-compiler for each
// machine (native's median, wazero-compiler's), as a farm's agent would, and returns
// their ids.
func storeMachineRuns(t *testing.T, store *results.Store, machines map[string][2]float64, order ...string) []int64 {
	t.Helper()
	var ids []int64
	for _, name := range order {
		m := machines[name]
		rep := report.Report{Environment: report.Environment{CPU: name + " CPU", Cores: 2, OS: "linux", Arch: "amd64"}, Results: []measure.Result{
			{Kernel: "fib_it", Args: []int{30}, Engine: "native", Median: m[0], Runs: 1},
			{Kernel: "fib_it", Args: []int{30}, Engine: "wazero-compiler", Median: m[1], Runs: 1},
		}}
		run := results.NewRun(results.SourceCLI, rep)
		run.Machine, run.MachineName, run.MachineDesc = name, name, json.RawMessage(`{"cpu":"`+name+` CPU"}`)
		id, err := store.Save(context.Background(), run)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func testMachinesSideBySide(t *testing.T, kind headless.Kind) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	store := tempStore(t)
	ids := storeMachineRuns(t, store, map[string][2]float64{"alpha": {100, 300}, "beta": {200, 400}}, "alpha", "beta")
	_, p := resultsPage(t, kind, store)

	p.open("#results?kernel=fib_it&args=30")
	p.waitFor(`document.getElementById("stored").dataset.loaded >= "1"`, 20*time.Second, "the Results tab")
	for _, id := range ids {
		sel := `#stored-runs-table tr[data-run="` + strconv.FormatInt(id, 10) + `"] input[type=checkbox]`
		p.waitFor(`document.querySelector('`+sel+`') !== null`, 10*time.Second, "run "+strconv.FormatInt(id, 10)+" in the runs' table")
		p.click(sel)
	}
	p.waitFor(`!document.getElementById("stored-machines-button").disabled`, 10*time.Second, "the side-by-side button")
	p.click("#stored-machines-button")
	p.waitFor(`document.getElementById("stored-machines-table") !== null`, 10*time.Second, "the machines' table")
	header, err := evalAs[[]string](p, `[...document.querySelectorAll("#stored-machines-table th")].map((th) => th.textContent)`)
	if err != nil {
		t.Fatal(err)
	}
	row, err := evalAs[[]string](p, `[...document.querySelectorAll('#stored-machines-table tr[data-cell="fib_it(30) wazero-compiler"] td')].map((td) => td.textContent)`)
	if err != nil {
		t.Fatal(err)
	}
	// alpha: 300/100, beta: 400/200; the spread: half the range (0.5) over the median (2.5).
	want := []string{"fib_it(30)", "wazero-compiler", "×3.00", "×2.00", "±20%"}
	if len(header) != 5 || header[2] != "alpha" || header[3] != "beta" || !slices.Equal(row, want) {
		t.Errorf("machines' table: header %q, wazero-compiler's row %q; want alpha and beta side by side and %q", header, row, want)
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// TestResultsMachinesRoute: GET /api/results/machines sets two to twenty stored runs side
// by side and refuses fewer, more, or an id that is not a run; a stored run's page names
// its machine.
func TestResultsMachinesRoute(t *testing.T) {
	store := tempStore(t)
	ids := storeMachineRuns(t, store, map[string][2]float64{"alpha": {100, 300}, "beta": {200, 400}}, "alpha", "beta")
	ts := httptest.NewServer(New(Options{Timeout: time.Minute, Results: store}))
	defer ts.Close()
	both := strconv.FormatInt(ids[0], 10) + "," + strconv.FormatInt(ids[1], 10)
	for _, c := range []struct {
		query  string
		status int
	}{{both, 200}, {strconv.FormatInt(ids[0], 10), 400}, {both + ",999", 404}, {both + ",x", 400}} {
		resp, err := http.Get(ts.URL + "/api/results/machines?ids=" + c.query)
		if err != nil {
			t.Fatal(err)
		}
		var v machinesView
		_ = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("ids=%s: %d, want %d", c.query, resp.StatusCode, c.status)
		}
		if c.status == 200 && (len(v.Runs) != 2 || v.Runs[0].Machine != "alpha" || len(v.Rows) != 2 || v.Rows[1][2] != "×3.00") {
			t.Errorf("ids=%s: %+v", c.query, v)
		}
	}
	resp, err := http.Get(ts.URL + "/runs/" + strconv.FormatInt(ids[1], 10))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !regexp.MustCompile(`>machine</[a-z]+>\s*<[a-z]+>beta<`).Match(page) {
		t.Errorf("run %d's page does not name its machine, beta:\n%s", ids[1], page)
	}
}
