package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
)

// TestFarmFlagsRejected: --each and --split need --farm, --farm needs one of them and a
// NATS URL, and an agent needs --nats; each refusal says what is allowed.
func TestFarmFlagsRejected(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--each"}, "--each and --split share the plan among a farm's agents: give --farm URL"},
		{[]string{"bench", "--farm", "nats://127.0.0.1:4222"}, "--farm: give --each (every agent runs the plan) or --split"},
		{[]string{"bench", "--farm", "nats://127.0.0.1:4222", "--each", "--split"}, "--farm: give --each"},
		{[]string{"bench", "--farm", "http://127.0.0.1:4222", "--each"}, `"http://127.0.0.1:4222" is not a NATS server URL: use nats://host:port`},
		{[]string{"bench", "--farm", "nats://127.0.0.1:1", "--each", "--compare-last", "--kernel", "fib_it"}, "--compare-last compares with this machine's last run"},
		{[]string{"bench", "--farm", "nats://127.0.0.1:1", "--each", "--attempts", "0"}, "--attempts 0: allowed 1 to 100"},
		{[]string{"bench", "--farm", "nats://127.0.0.1:1", "--each", "--agents", "0"}, "--agents 0: allowed 1 to 1000"},
		{[]string{"agent"}, "--nats is required"},
		{[]string{"agent", "--nats", "nats://127.0.0.1:1", "--name", "a b"}, `agent name "a b": use 1 to 64 letters, digits, - or _`},
		{[]string{"agent", "--nats", "nats://127.0.0.1:1", "--name", "a", "--engine", "v8"}, `unknown engine "v8"`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), c.want) || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q; want a refusal saying %q", c.args, code, stderr.String(), c.want)
		}
	}
}

// TestResultsMachines: two stored runs of one plan from two machines, side by side under
// their machines' names, with each engine's ×native per machine.
func TestResultsMachines(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "results.db")
	store, err := results.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name           string
		native, wazero float64
	}{{"alpha", 100, 300}, {"beta", 200, 400}} {
		rep := report.Report{Environment: report.Environment{CPU: m.name + " CPU", Cores: 2}, Results: []measure.Result{
			{Kernel: "fib_rec", Args: []int{30}, Engine: "native", Median: m.native},
			{Kernel: "fib_rec", Args: []int{30}, Engine: "wazero-compiler", Median: m.wazero},
		}}
		run := results.NewRun(results.SourceCLI, rep)
		run.Machine, run.MachineName, run.MachineDesc = m.name, m.name, json.RawMessage(`{}`)
		if _, err := store.Save(context.Background(), run); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"results", "machines", "--results-db", dsn}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"beta", "alpha", "×2.00", "×3.00", "±20%"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("results machines lacks %q:\n%s", want, stdout.String())
		}
	}
	stdout.Reset()
	if code := run([]string{"results", "list", "--results-db", dsn}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "alpha: alpha CPU, 2 cores") {
		t.Errorf("results list names no machine: exit %d\n%s", code, stdout.String())
	}
	if code := run([]string{"results", "machines", "--results-db", dsn, "1"}, &stdout, &stderr); code != 2 {
		t.Errorf("results machines with one id: exit %d, want 2", code)
	}
}
