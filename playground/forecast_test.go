package playground

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// POST /api/forecast gives a cell's time from this machine's stored runs once one of its
// engine is stored, a guess before, and refuses what a run refuses.
func TestForecastFromStoredRuns(t *testing.T) {
	store := tempStore(t)
	ts := fakeServer(t, Options{Engines: []string{"native", "wazero-interpreter"}, Results: store}, instantRun)
	forecast := func(body string) (int, forecastAnswer) {
		t.Helper()
		resp, err := http.Post(ts.URL+"/api/forecast", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a forecastAnswer
		json.NewDecoder(resp.Body).Decode(&a)
		return resp.StatusCode, a
	}
	native := `{"kernel":"fib_it","engine":"native","args":{"n":92},"runs":1}`
	if code, a := forecast(native); code != http.StatusOK || a.Stored || a.MS <= 0 {
		t.Fatalf("before any run: %d %+v, want a guess (stored false) above 0 ms", code, a)
	}
	readEvents(t, postRun(t, ts.URL, native).Body)
	if code, a := forecast(native); code != http.StatusOK || !a.Stored {
		t.Errorf("after a stored run of the cell: %d %+v, want stored", code, a)
	}
	if code, a := forecast(`{"kernel":"fib_it","engine":"wazero-interpreter","args":{"n":92},"runs":1}`); code != http.StatusOK || a.Stored {
		t.Errorf("an engine with nothing stored: %d %+v, want a guess", code, a)
	}
	if code, _ := forecast(`{"kernel":"fib_it","engine":"browser-wasm","args":{"n":92}}`); code != http.StatusBadRequest {
		t.Errorf("a page engine: %d, want 400 as a run answers", code)
	}
}
