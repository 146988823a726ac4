package benchtool

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParsers: the reports of ab 2.3, wrk 4.1, wasmgap load and vegeta 12.13, saved from
// real runs (a page answered 200, a route answered 404), read alike.
func TestParsers(t *testing.T) {
	for _, c := range []struct {
		file  string
		parse func([]byte) (Result, error)
		want  Result
	}{
		{"ab.txt", ParseAb, Result{RPS: 1770.35, P99: 67 * time.Millisecond, Requests: 200}},
		{"ab-404.txt", ParseAb, Result{RPS: 2282.48, P99: 14 * time.Millisecond, Requests: 50, Errors: 50}},
		{"wrk.txt", ParseWrk, Result{RPS: 28537.60, P99: 78230 * time.Microsecond, Requests: 31386}},
		{"wrk-404.txt", ParseWrk, Result{RPS: 27998.24, P99: 900 * time.Microsecond, Requests: 30793, Errors: 30793}},
		{"load.json", ParseLoad, Result{RPS: 23461.505886139905, P99: 1162 * time.Microsecond, Requests: 100}},
		{"load-404.json", ParseLoad, Result{RPS: 19427.80075546946, Requests: 100, Errors: 100}},
		{"vegeta.json", ParseVegeta, Result{RPS: 145.32702745280642, P99: 126918801, Requests: 150}},
		{"vegeta-404.json", ParseVegeta, Result{RPS: 41.84170365833806, P99: 104209753, Requests: 50, Errors: 50}},
		{"vegeta-refused.json", ParseVegeta, Result{RPS: 21.00557881706352, P99: 3832379, Requests: 20, Errors: 20}},
	} {
		got, err := c.parse([]byte(readTestdata(t, c.file)))
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.file, got, c.want)
		}
	}
}

// TestParsersRefuse: a report that is not the tool's (a crash, the wrong
// tool, wrk without --latency) is an error that quotes it, never zeros.
func TestParsersRefuse(t *testing.T) {
	wrkNoLatency := strings.Replace(readTestdata(t, "wrk.txt"), "     99%", "", 1)
	for _, c := range []struct {
		name, out string
		parse     func([]byte) (Result, error)
		want      string
	}{
		{"ab, crashed", "apr_socket_recv: Connection refused (111)\n", ParseAb, "parse ab's report"},
		{"ab, given wrk's", readTestdata(t, "wrk.txt"), ParseAb, "parse ab's report"},
		{"wrk without --latency", wrkNoLatency, ParseWrk, "run with --latency"},
		{"wrk, given ab's", readTestdata(t, "ab.txt"), ParseWrk, "parse wrk's report"},
		{"load, text", "Requests/s: 12\n", ParseLoad, "wasmgap load's JSON report"},
		{"load, other JSON", `{"scenario":"sse-fanout"}`, ParseLoad, "no requests_per_sec"},
		{"vegeta, text report", "Requests      [total, rate, throughput]  150, 145.33, 144.70\n", ParseVegeta, "vegeta's JSON report"},
		{"vegeta, given wasmgap load's", readTestdata(t, "load.json"), ParseVegeta, "no rate or latencies.99th"},
	} {
		if _, err := c.parse([]byte(c.out)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

func TestMedian(t *testing.T) {
	xs := []float64{3, 1, 2}
	if m := Median(xs); m != 2 || xs[0] != 3 {
		t.Errorf("Median(3, 1, 2) = %v (input now %v)", m, xs)
	}
	if m := Median([]time.Duration{4, 1, 3, 2}); m != 3 {
		t.Errorf("Median of an even count: %v, want the upper one, 3", m)
	}
}

// TestRun: a command over its limit is killed with its process group, and
// the error says so.
func TestRun(t *testing.T) {
	if err := Run(context.Background(), exec.Command("true"), time.Minute); err != nil {
		t.Fatalf("true: %v", err)
	}
	start := time.Now()
	err := Run(context.Background(), exec.Command("sh", "-c", "sleep 30 & sleep 30"), 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "killed after 100ms") {
		t.Fatalf("sleep over its limit: %v", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("the process group was not killed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Run(ctx, exec.Command("sleep", "30"), time.Minute); err != context.Canceled {
		t.Fatalf("canceled: %v", err)
	}
}

// TestProc: this process is in its own group's list and has used CPU and memory.
func TestProc(t *testing.T) {
	pid := os.Getpid()
	pgid, err := syscall.Getpgid(pid)
	if err != nil {
		t.Skip(err)
	}
	found := false
	for _, p := range GroupPIDs(pgid) {
		found = found || p == pid
	}
	if !found {
		t.Errorf("GroupPIDs(%d) lacks this process %d", pgid, pid)
	}
	for CPUTime(pid) == 0 {
		_ = strings.Repeat("x", 1<<20) // use a clock tick of CPU
	}
	s := SampleRSS(pid)
	if peak := s.Stop(); peak <= 0 || RSS(pid) <= 0 {
		t.Errorf("RSS: peak %d, now %d", peak, RSS(pid))
	}
	if RSS(-1) != 0 || CPUTime(-1) != 0 {
		t.Error("a process that does not exist has figures")
	}
	if _, err := ProcessRSS(-1); err == nil {
		t.Error("ProcessRSS of a process that does not exist: no error")
	}
	if _, err := ProcessCPU(-1); err == nil {
		t.Error("ProcessCPU of a process that does not exist: no error")
	}
}
