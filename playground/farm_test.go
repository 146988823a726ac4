package playground

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/farm"
	"github.com/wasmgap/wasmgap/internal/farm/farmtest"
	"github.com/wasmgap/wasmgap/internal/results"
)

func postFarm(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/api/farm", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestFarmRefused: a server without a farm refuses a plan and says how to give it one; one
// with a farm checks the plan as a run's before it queues or connects to anything.
func TestFarmRefused(t *testing.T) {
	off := fakeServer(t, Options{}, nil)
	resp := postFarm(t, off.URL, `{"mode":"each","kernels":["fib_it"],"engines":["native"]}`)
	var e apiError
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(e.Error, "wasmgap serve --farm") {
		t.Errorf("without a farm: %d %q; want 404 saying how to start one", resp.StatusCode, e.Error)
	}
	var cat catalogue
	kresp, err := http.Get(off.URL + "/api/kernels")
	if err != nil {
		t.Fatal(err)
	}
	defer kresp.Body.Close()
	if err := json.NewDecoder(kresp.Body).Decode(&cat); err != nil || cat.Panels["farm"] {
		t.Errorf("the catalogue of a server without a farm: panels %v (%v)", cat.Panels, err)
	}

	// Nothing listens at this URL: a plan that passed its checks would fail to connect.
	ts := fakeServer(t, Options{Farm: &FarmOptions{URL: "nats://127.0.0.1:1"}}, nil)
	for _, tt := range []struct{ name, body, field, mentions string }{
		{"no mode", `{"kernels":["fib_it"],"engines":["native"]}`, "mode", `use "each"`},
		{"bad mode", `{"mode":"all","kernels":["fib_it"],"engines":["native"]}`, "mode", `"split"`},
		{"no engines", `{"mode":"each","kernels":["fib_it"]}`, "engines", "engines is missing"},
		{"unknown engine", `{"mode":"each","kernels":["fib_it"],"engines":["v8"]}`, "engine", "v8"},
		{"unknown kernel", `{"mode":"each","kernels":["fib"],"engines":["native"]}`, "kernel", "fib"},
		{"arg above max", `{"mode":"split","kernels":["fib_rec"],"engines":["native"],"args":{"fib_rec.n":93}}`, "args.n", "allowed 0 to 92"},
		{"runs zero", `{"mode":"each","kernels":["fib_it"],"engines":["native"],"runs":0}`, "runs", "allowed 1 to 100"},
		{"agents zero", `{"mode":"each","kernels":["fib_it"],"engines":["native"],"agents":0}`, "agents", "allowed 1 to 1000"},
		{"engines string", `{"mode":"each","kernels":["fib_it"],"engines":"native"}`, "engines", "an array of strings"},
		{"unknown field", `{"mode":"each","kernels":["fib_it"],"engines":["native"],"executions":3}`, "executions", "unknown field"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := postFarm(t, ts.URL, tt.body)
			var e apiError
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusBadRequest || e.Field != tt.field || !strings.Contains(e.Error, tt.mentions) {
				t.Errorf("%d field %q %q; want 400 field %q mentioning %q", resp.StatusCode, e.Field, e.Error, tt.field, tt.mentions)
			}
		})
	}
}

// TestFarmRunsAPlan: the page's server sends a plan to a farm of one agent (an embedded
// NATS server that admits only nkeys, the agent's with an agent's rights) through its
// queue, streams each result with its table's progress, and stores the table as a run
// that names the agent's machine.
func TestFarmRunsAPlan(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	store, farmOpts := farmOfOne(t, ctx)
	ts := fakeServer(t, Options{Results: store, Farm: farmOpts}, nil)

	resp := postFarm(t, ts.URL, `{"mode":"each","kernels":["fib_it","fib_rec"],"engines":["native"],"args":{"n":5},"runs":1,"warmup":0,"min_sample_ms":0,"warmup_ms":0}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var events []farmEvent
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var e farmEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		events = append(events, e)
	}
	var types []string
	var got []farmEvent
	var done *farmEvent
	for i, e := range events {
		types = append(types, e.Type)
		switch e.Type {
		case "result":
			got = append(got, e)
		case "done":
			done = &events[i]
		case "error":
			t.Fatalf("error event: %s", e.Error)
		}
	}
	if len(types) < 2 || types[0] != "started" && types[0] != "queued" {
		t.Errorf("events %v; want the queue's first", types)
	}
	if len(got) != 2 || done == nil || len(done.Tables) != 1 {
		t.Fatalf("events %v; want two results and a done with one table", types)
	}
	for i, r := range got {
		if r.Agent != "a" || r.Table == nil || r.Table.Name != "a" || r.Table.Done != i+1 || r.Table.Cells != 2 || r.Result == nil || r.Result.Failed() {
			t.Errorf("result %d: agent %q table %+v result %+v; want agent a's table at %d of 2, measured", i, r.Agent, r.Table, r.Result, i+1)
		}
	}
	table := done.Tables[0]
	if table.Run == 0 || table.Done != 2 || table.Partial != "" || table.Machine == "" {
		t.Fatalf("done's table %+v; want a stored whole run with its machine", table)
	}
	run, err := store.Get(ctx, table.Run)
	if err != nil {
		t.Fatal(err)
	}
	if run.MachineName != "a" || len(run.Report.Results) != 2 {
		t.Errorf("stored run: machine %q with %d cells; want a with 2", run.MachineName, len(run.Report.Results))
	}
}

// farmOfOne starts a farm for a test, stopped when it ends: an embedded NATS server that
// admits only nkeys, agent "a" offering native alone, and a results store. It returns the
// store and the page server's FarmOptions for that farm.
func farmOfOne(t *testing.T, ctx context.Context) (*results.Store, *FarmOptions) {
	t.Helper()
	dir := t.TempDir()
	nats, err := farmtest.StartNATS(dir, farmtest.Bench, "a")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nats.Shutdown)
	agentCtx, stopAgent := context.WithCancel(ctx)
	agentDone := make(chan error, 1)
	go func() {
		agentDone <- farm.RunAgent(agentCtx, farm.AgentConfig{URL: nats.URL, Auth: farm.Auth{NkeyFile: nats.Seeds["a"]}, Name: "a", Engines: []string{engine.Native}})
	}()
	t.Cleanup(func() {
		stopAgent()
		if err := <-agentDone; err != nil {
			t.Error(err)
		}
	})
	store, err := results.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store, &FarmOptions{URL: nats.URL, Auth: farm.Auth{NkeyFile: nats.Seeds[farmtest.Bench]}}
}
