package playground

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/warmup"
)

// TestWarmupGet: GET /api/warmup/{id} answers a stored study, 404 for an id the store
// does not hold or a server without a store, 400 for what is not an id.
func TestWarmupGet(t *testing.T) {
	store := tempStore(t)
	rep := warmup.Report{Kernel: "fib_it", Args: []int{30}, Label: "fib_it(30)"}
	rep.Engines = append(rep.Engines, warmup.NewEngineResult("native", []warmup.Series{{Times: []float64{5, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}, Group: 1}}, warmup.Options{}))
	id, err := store.SaveStudy(context.Background(), results.NewStudy(results.SourceCLI, rep))
	if err != nil {
		t.Fatal(err)
	}
	ts := fakeServer(t, Options{Results: store}, instantRun)
	bare := fakeServer(t, Options{}, instantRun)
	for _, c := range []struct {
		name, url string
		status    int
		want      string
	}{
		{"found", ts.URL + "/api/warmup/" + strconv.FormatInt(id, 10), http.StatusOK, `"label":"fib_it(30)"`},
		{"unknown id", ts.URL + "/api/warmup/" + strconv.FormatInt(id+1, 10), http.StatusNotFound, "no stored warm-up study " + strconv.FormatInt(id+1, 10)},
		{"not a number", ts.URL + "/api/warmup/abc", http.StatusBadRequest, `a positive integer): \"abc\" is not one`},
		{"zero", ts.URL + "/api/warmup/0", http.StatusBadRequest, "is not one"},
		{"no store", bare.URL + "/api/warmup/1", http.StatusNotFound, "keeps no results store"},
	} {
		resp, err := http.Get(c.url)
		if err != nil {
			t.Fatal(err)
		}
		var body json.RawMessage
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != c.status || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: %d %s (%v), want %d with %q", c.name, resp.StatusCode, body, err, c.status, c.want)
		}
		if c.status == http.StatusOK {
			var st results.Study
			if err := json.Unmarshal(body, &st); err != nil || st.ID != id || len(st.Report.Engines) != 1 || st.Report.Engines[0].Engine != "native" {
				t.Errorf("%s: %+v, %v; want study %d of native", c.name, st, err, id)
			}
		}
	}
}
