package farm

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/runner"
)

// agentEnv holds an AgentConfig as JSON: the test binary then runs as that agent (as
// `wasmgap agent` does) until SIGTERM, or until it is killed.
const agentEnv = "WASMGAP_FARM_TEST_AGENT"

func TestMain(m *testing.M) {
	runner.ServeWorkerIfRequested()
	if js := os.Getenv(agentEnv); js != "" {
		var cfg AgentConfig
		if err := json.Unmarshal([]byte(js), &cfg); err != nil {
			panic(err)
		}
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		if err := RunAgent(ctx, cfg); err != nil {
			os.Stderr.WriteString("agent: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testTimeout bounds each test's plan: generous, for a machine whose cores are busy.
const testTimeout = 4 * time.Minute

// testAckWait is the agents' ack deadline in the tests: a killed agent's job goes to the
// other agent after it.
const testAckWait = 2 * time.Second

// startNATS starts an embedded NATS server with JetStream on loopback that admits only
// the holders of the nkeys it returns (the seed files' paths).
func startNATS(t *testing.T, users ...string) (url string, seeds map[string]string) {
	t.Helper()
	seeds = map[string]string{}
	var nk []*server.NkeyUser
	for _, u := range users {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		seed, _ := kp.Seed()
		path := filepath.Join(t.TempDir(), u+".nk")
		if err := os.WriteFile(path, seed, 0o600); err != nil {
			t.Fatal(err)
		}
		seeds[u] = path
		nk = append(nk, &server.NkeyUser{Nkey: pub})
	}
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true, JetStream: true, StoreDir: t.TempDir(), Nkeys: nk})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(20 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	return srv.ClientURL(), seeds
}

// agentProc is an agent running in a process of its own, its log lines kept.
type agentProc struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  []string
	// started receives the job id of each "job started" line.
	started chan string
}

func startAgent(t *testing.T, url, seed, name string, engines ...string) *agentProc {
	t.Helper()
	cfg, _ := json.Marshal(AgentConfig{URL: url, Auth: Auth{NkeyFile: seed}, Name: name, Engines: engines, AckWait: testAckWait})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), agentEnv+"="+string(cfg))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := childproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	a := &agentProc{name: name, cmd: cmd, started: make(chan string, 100)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			a.mu.Lock()
			a.log = append(a.log, line)
			a.mu.Unlock()
			if strings.Contains(line, `msg="job started"`) {
				a.started <- field(line, "job")
			}
		}
	}()
	t.Cleanup(func() {
		_ = childproc.KillGroup(cmd)
		_ = cmd.Wait()
		<-done
		if t.Failed() {
			t.Logf("agent %s's log:\n%s", name, strings.Join(a.lines(), "\n"))
		}
	})
	return a
}

func (a *agentProc) lines() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.log...)
}

// field is the value of key=value in a log line of slog's text handler.
func field(line, key string) string {
	_, rest, ok := strings.Cut(line, " "+key+"=")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, " ")
	return strings.Trim(v, `"`)
}

// testCells are n cells of fib_it on native (n = 1 to n), each sampled for at least
// 300 ms so that a cell is still in flight when its agent is killed, made by the one
// path bench takes (runner.Input, Plan.Jobs, CellsOf).
func testCells(t *testing.T, n int) []Cell {
	t.Helper()
	var cells []Cell
	runs, warmup := 1, 0
	none, sample := time.Duration(0), 300*time.Millisecond
	for i := 1; i <= n; i++ {
		in := runner.Input{Engines: []string{engine.Native}, Kernels: []string{"fib_it"}, Args: map[string]string{"n": strconv.Itoa(i)},
			Runs: &runs, Warmup: &warmup, WarmupTime: &none, MinSample: &sample}
		plan, err := in.Plan()
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := plan.Jobs()
		if err != nil {
			t.Fatal(err)
		}
		c, err := CellsOf(jobs)
		if err != nil {
			t.Fatal(err)
		}
		cells = append(cells, c...)
	}
	return cells
}

func openStore(t *testing.T) *results.Store {
	t.Helper()
	s, err := results.Open(context.Background(), filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSplitSurvivesAKilledAgent: 20 cells shared between two agents of one kind; one
// agent is killed (SIGKILL) with a cell in flight. Every cell is stored once, and the
// killed agent's cell is run again by the other agent.
func TestSplitSurvivesAKilledAgent(t *testing.T) {
	url, seeds := startNATS(t, "bench", "a", "b")
	a := startAgent(t, url, seeds["a"], "a", engine.Native)
	b := startAgent(t, url, seeds["b"], "b", engine.Native)
	store := openStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	killed := make(chan string, 1)
	go func() {
		// a's second cell: it has taken and finished one, so both agents are at work.
		for i := 0; i < 2; i++ {
			select {
			case id := <-a.started:
				if i == 1 {
					_ = childproc.KillGroup(a.cmd) // SIGKILL to the agent and its worker
					killed <- id
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	var progress strings.Builder
	tables, err := RunPlan(ctx, PlanConfig{URL: url, Auth: Auth{NkeyFile: seeds["bench"]}, Mode: Split, Cells: testCells(t, 20),
		Engines: []string{engine.Native}, Agents: 2, Store: store, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the plan did not finish within %v:\n%s", testTimeout, progress.String())
	}
	var job string
	select {
	case job = <-killed:
	default:
		t.Fatalf("agent a was never killed:\n%s", progress.String())
	}
	if len(tables) != 1 || tables[0].RunID == 0 {
		t.Fatalf("tables: %+v; want one stored table for the one kind", tables)
	}
	run, err := store.Get(ctx, tables[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := store.Jobs(ctx, tables[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Report.Results) != 20 || len(jobs) != 20 {
		t.Fatalf("stored %d cells (%d jobs), want 20:\n%s", len(run.Report.Results), len(jobs), progress.String())
	}
	seen := map[string]bool{}
	for i, j := range jobs {
		if seen[j.Job] {
			t.Errorf("job %s stored twice", j.Job)
		}
		seen[j.Job] = true
		if r := run.Report.Results[i]; r.Failed() {
			t.Errorf("cell %s failed: %s", r.Label(), r.Failure)
		}
		if j.Job == job && j.Agent != "b" {
			t.Errorf("job %s, in flight on a when it was killed, stored from agent %q; want b", job, j.Agent)
		}
	}
	if !seen[job] {
		t.Errorf("job %s, in flight on a when it was killed, is not stored", job)
	}
	for _, line := range a.lines() {
		if strings.Contains(line, `msg="job done"`) && field(line, "job") == job {
			t.Errorf("agent a finished job %s before it was killed: the test did not kill it mid-cell", job)
		}
	}
	again := false
	for _, line := range b.lines() {
		again = again || (strings.Contains(line, `msg="job started"`) && field(line, "job") == job && field(line, "delivery") != "1")
	}
	if !again {
		t.Errorf("agent b's log shows no second delivery of job %s", job)
	}
}
