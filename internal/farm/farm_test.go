package farm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/farm/farmtest"
	"github.com/wasmgap/wasmgap/internal/measure"
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

// testAckWait is the plans' ack deadline in the tests: a killed agent's job goes to the
// other agent after it.
const testAckWait = 2 * time.Second

// startNATS starts an embedded NATS server with JetStream on loopback that admits only
// the holders of the nkeys it returns (the seed files' paths); users other than "bench"
// have an agent's permissions.
func startNATS(t *testing.T, users ...string) (url string, seeds map[string]string) {
	t.Helper()
	n, err := farmtest.StartNATS(t.TempDir(), users...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	return n.URL, n.Seeds
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
	cfg, _ := json.Marshal(AgentConfig{URL: url, Auth: Auth{NkeyFile: seed}, Name: name, Engines: engines})
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
// sample (0: one call per sample), made by the one path bench takes (runner.Input,
// Plan.Jobs, CellsOf).
func testCells(t *testing.T, n int, sample time.Duration) []Cell {
	t.Helper()
	var cells []Cell
	runs, warmup := 1, 0
	none := time.Duration(0)
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

	// Each cell samples for 300 ms at least, so that a's cell is still in flight when
	// it is killed on starting it.
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
	tables, err := RunPlan(ctx, PlanConfig{URL: url, Auth: Auth{NkeyFile: seeds["bench"]}, Mode: Split, Cells: testCells(t, 20, 300*time.Millisecond),
		Engines: []string{engine.Native}, Agents: 2, AckWait: testAckWait, Store: store, Progress: &progress})
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

// TestEachRunsThePlanOnEveryAgent: with --each, two agents run the whole plan: two
// stored runs, one per machine, each with every cell. Agent a is killed (SIGKILL) after
// its first cell and started again: it resumes its queue.
func TestEachRunsThePlanOnEveryAgent(t *testing.T) {
	url, seeds := startNATS(t, "bench", "a", "b")
	a := startAgent(t, url, seeds["a"], "a", engine.Native)
	startAgent(t, url, seeds["b"], "b", engine.Native)
	store := openStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cells := testCells(t, 20, 0)
	var progress strings.Builder
	type answer struct {
		tables []*Table
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		tables, err := RunPlan(ctx, PlanConfig{URL: url, Auth: Auth{NkeyFile: seeds["bench"]}, Mode: Each, Cells: cells,
			Engines: []string{engine.Native}, Agents: 2, AckWait: testAckWait, Store: store, Progress: &progress})
		done <- answer{tables, err}
	}()
	for i := 0; i < 2; i++ {
		select {
		case <-a.started:
		case <-ctx.Done():
			t.Fatal("agent a started no second cell")
		}
	}
	_ = childproc.KillGroup(a.cmd)
	again := startAgent(t, url, seeds["a"], "a", engine.Native)
	ans := <-done
	tables, err := ans.tables, ans.err
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-again.started:
	default:
		t.Errorf("agent a, started again, ran no cell: it did not resume its queue")
	}
	if len(tables) != 2 {
		t.Fatalf("%d tables, want one per agent:\n%s", len(tables), progress.String())
	}
	for i, name := range []string{"a", "b"} {
		run, err := store.Get(ctx, tables[i].RunID)
		if err != nil {
			t.Fatal(err)
		}
		jobs, _ := store.Jobs(ctx, run.ID)
		if run.MachineName != name || len(run.Report.Results) != len(cells) || len(jobs) != len(cells) {
			t.Errorf("run %d: machine %q with %d cells; want %s with %d:\n%s", run.ID, run.MachineName, len(run.Report.Results), name, len(cells), progress.String())
		}
		for _, j := range jobs {
			if j.Agent != name {
				t.Errorf("run of %s holds job %s from agent %s", name, j.Job, j.Agent)
			}
		}
		var m Machine
		if err := json.Unmarshal(run.MachineDesc, &m); err != nil || !m.Offers(engine.Native) || m.Cores == 0 {
			t.Errorf("run %d's machine description: %s (%v)", run.ID, run.MachineDesc, err)
		}
	}
}

// TestAgentRefusesBadJobs: an agent answers a malformed job, an oversized one, one that
// names an engine it lacks and one delivered more often than its attempts with a result
// that says why, and goes on to run the next. A client without credentials is refused.
func TestAgentRefusesBadJobs(t *testing.T) {
	url, seeds := startNATS(t, "bench", "a")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if c, err := connect(ctx, url, Auth{}, "anonymous"); err == nil {
		c.close()
		t.Error("a client without credentials connected")
	}
	c, err := connect(ctx, url, Auth{NkeyFile: seeds["bench"]}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	// An agent's credentials publish results, never jobs.
	ac, err := connect(ctx, url, Auth{NkeyFile: seeds["a"]}, "an agent")
	if err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
	if _, err := ac.js.Publish(pctx, agentJobs("a", "x"), []byte("{}")); err == nil {
		t.Error("an agent's credentials published a job")
	}
	pcancel()
	ac.close()
	run := newRunID()
	publish := func(id string, data []byte) {
		t.Helper()
		if _, err := c.js.Publish(ctx, agentJobs("a", run), data, jetstream.WithMsgID(id)); err != nil {
			t.Fatal(err)
		}
	}
	job := func(id, eng string, attempts int) []byte {
		cell := testCells(t, 1, 0)[0]
		cell.Engine = eng
		js, _ := json.Marshal(Job{ID: id, Run: run, Cell: cell, Attempts: attempts})
		return js
	}
	// A job delivered once already (to a consumer that never answered) with one attempt.
	cons, err := c.js.CreateOrUpdateConsumer(ctx, JobsStream, jetstream.ConsumerConfig{Durable: "agent-a", FilterSubject: agentJobs("a", "*"),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Second, MaxDeliver: -1})
	if err != nil {
		t.Fatal(err)
	}
	publish("tried", job("tried", engine.Native, 1))
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for range batch.Messages() { // taken, never acknowledged
	}
	publish("bad", []byte("{not json"))
	big := []byte(`{"id":"big","pad":"` + strings.Repeat("x", MaxJobBytes) + `"}`)
	publish("big", big)
	publish("lacks", job("lacks", engine.WazeroCompiler, 3))
	publish("good", job("good", engine.Native, 3))

	agentCtx, stop := context.WithCancel(ctx)
	agentDone := make(chan error, 1)
	go func() {
		agentDone <- RunAgent(agentCtx, AgentConfig{URL: url, Auth: Auth{NkeyFile: seeds["a"]}, Name: "a", Engines: []string{engine.Native}})
	}()
	defer func() {
		stop()
		if err := <-agentDone; err != nil {
			t.Error(err)
		}
	}()
	want := map[string]string{
		"tried": "given up after 1 deliveries without a result",
		"bad":   "malformed job: invalid character 'n'",
		"big":   fmt.Sprintf("job of %d bytes is over the limit of %d bytes", len(big), MaxJobBytes),
		"lacks": "engine wazero-compiler is not offered by agent a: it offers native",
		"good":  "",
	}
	rc, err := c.js.CreateOrUpdateConsumer(ctx, ResultsStream, jetstream.ConsumerConfig{Durable: "test", FilterSubject: resultSubjectOf(run), AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Result{}
	for len(got) < len(want) && ctx.Err() == nil {
		batch, err := rc.Fetch(10, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			r, err := DecodeResult(m.Data())
			if err != nil {
				t.Fatal(err)
			}
			got[r.Job] = r
			_ = m.Ack()
		}
	}
	for id, reason := range want {
		r, ok := got[id]
		switch {
		case !ok:
			t.Errorf("no result for job %s", id)
		case reason == "" && (r.Cell == nil || r.Cell.Failed()):
			t.Errorf("job %s: refused %q, cell %+v; want a measured cell", id, r.Refused, r.Cell)
		case reason != "" && !strings.Contains(r.Refused, reason):
			t.Errorf("job %s refused with %q; want it to say %q", id, r.Refused, reason)
		}
	}
}

// TestCollectorRefusesForeignResults: a result is taken only for a job of the run, from
// the agent (Each) or the kind (Split) it was published for, holding the job's cell.
func TestCollectorRefusesForeignResults(t *testing.T) {
	cells := testCells(t, 2, 0)
	each := &Table{agent: "a"}
	split := &Table{kind: "k1"}
	col := &collector{cfg: PlanConfig{Cells: cells}, run: "r", jobs: map[string]jobRef{"r-0-0": {each, 0}, "r-1-1": {split, 1}}}
	measured := func(c Cell) *measure.Result {
		return &measure.Result{Kernel: c.Kernel, Args: c.Args, Engine: c.Engine}
	}
	for _, c := range []struct {
		name string
		r    Result
		want string
	}{
		{"each", Result{Run: "r", Job: "r-0-0", Agent: "a", Cell: measured(cells[0])}, ""},
		{"split", Result{Run: "r", Job: "r-1-1", Agent: "b", Machine: Machine{Kind: "k1"}, Cell: measured(cells[1])}, ""},
		{"refusal", Result{Run: "r", Job: "r-0-0", Agent: "a", Refused: "engine lacking"}, ""},
		{"unknown job", Result{Run: "r", Job: "r-9-9", Agent: "a", Cell: measured(cells[0])}, "which this run did not publish"},
		{"another agent", Result{Run: "r", Job: "r-0-0", Agent: "b", Cell: measured(cells[0])}, "published for agent a"},
		{"another kind", Result{Run: "r", Job: "r-1-1", Agent: "b", Machine: Machine{Kind: "k2"}, Cell: measured(cells[1])}, "another kind of machine"},
		{"another cell", Result{Run: "r", Job: "r-0-0", Agent: "a", Cell: measured(cells[1])}, "not the job's fib_it(1) on native"},
		{"another run", Result{Run: "q", Job: "r-0-0", Agent: "a", Cell: measured(cells[0])}, `names run "q", not this run r`},
		{"both", Result{Run: "r", Job: "r-0-0", Agent: "a", Cell: measured(cells[0]), Refused: "x"}, "neither a cell nor a refusal, or both"},
	} {
		data, _ := json.Marshal(c.r)
		_, _, err := col.check(data)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
	if _, _, err := col.check(make([]byte, MaxResultBytes+1)); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("an oversized result: %v", err)
	}
}

// cancelOn is a progress writer that cancels when a line holds its text.
type cancelOn struct {
	text   string
	cancel context.CancelFunc
	mu     sync.Mutex
	b      strings.Builder
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b.Write(p)
	if strings.Contains(string(p), c.text) {
		c.cancel()
	}
	return len(p), nil
}

// TestInterruptedPlanKeepsItsCells: a plan stopped after its first result (Ctrl-C)
// withdraws the jobs no agent took, and keeps the cells done as a partial stored run.
func TestInterruptedPlanKeepsItsCells(t *testing.T) {
	url, seeds := startNATS(t, "bench", "a")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	agentCtx, stopAgent := context.WithCancel(ctx)
	agentDone := make(chan error, 1)
	go func() {
		agentDone <- RunAgent(agentCtx, AgentConfig{URL: url, Auth: Auth{NkeyFile: seeds["a"]}, Name: "a", Engines: []string{engine.Native}})
	}()
	defer func() {
		stopAgent()
		if err := <-agentDone; err != nil {
			t.Error(err)
		}
	}()
	store := openStore(t)
	planCtx, interrupt := context.WithCancel(ctx)
	progress := &cancelOn{text: "[1/", cancel: interrupt}
	tables, err := RunPlan(planCtx, PlanConfig{URL: url, Auth: Auth{NkeyFile: seeds["bench"]}, Mode: Each, Cells: testCells(t, 6, 300*time.Millisecond),
		Engines: []string{engine.Native}, AckWait: testAckWait, Store: store, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 || len(tables[0].Report.Results) == 0 || len(tables[0].Report.Results) == 6 || tables[0].Report.Method.Partial == "" {
		t.Fatalf("tables after the interrupt: %+v; want one, partial, with its cells done:\n%s", tables, progress.b.String())
	}
	run, err := store.Get(ctx, tables[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Report.Method.Partial == "" || len(run.Report.Results) == 0 {
		t.Errorf("stored run: partial %q with %d cells; want it marked partial", run.Report.Method.Partial, len(run.Report.Results))
	}
	c, err := connect(ctx, url, Auth{NkeyFile: seeds["bench"]}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	st, err := c.js.Stream(ctx, JobsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(jobSubject+">"))
	if err != nil {
		t.Fatal(err)
	}
	// The agent may hold one job it took before the interrupt; the rest are withdrawn.
	if info.State.Msgs > 1 {
		t.Errorf("%d jobs left in %s after the interrupt; want those no agent took withdrawn", info.State.Msgs, JobsStream)
	}
}

// TestInstalledRule: a probed runtime is offered when its probe found it, a browser engine
// when its browser is installed, an engine built into the binary always; an engine that
// needs a program nothing probes, and an engine of the page, are not offered.
func TestInstalledRule(t *testing.T) {
	probe := func() string { return "" }
	infos := []engine.Info{
		{Name: "built-in", Place: engine.PlaceServer},
		{Name: "found", Place: engine.PlaceServer, Probe: probe, Version: "gcc 12", Install: "apt-get install gcc"},
		{Name: "not-found", Place: engine.PlaceServer, Probe: probe, Install: "apt-get install php-cli"},
		{Name: "unprobed", Place: engine.PlaceServer, Install: "apt-get install binaryen", Version: "wazero 1.9"},
		{Name: "browser-there", Place: engine.PlaceServer},
		{Name: "browser-missing", Place: engine.PlaceServer},
		{Name: "in-page", Place: engine.PlacePage},
	}
	browsers := map[string]bool{"browser-there": true, "browser-missing": false}
	got := installed(infos, func(name string) (bool, bool) { has, ok := browsers[name]; return has, ok })
	if want := []string{"built-in", "found", "browser-there"}; !slices.Equal(got, want) {
		t.Errorf("installed = %v, want %v", got, want)
	}
	all := Installed()
	for _, name := range []string{engine.Native, engine.WazeroCompiler, engine.WazeroInterpreter, engine.Yaegi} {
		if !slices.Contains(all, name) {
			t.Errorf("Installed() = %v lacks %s, built into the binary", all, name)
		}
	}
}

// TestAgentOffersInstalledEngines: an agent given no engines offers every engine
// installed on its machine; given some, it offers those only.
func TestAgentOffersInstalledEngines(t *testing.T) {
	url, seeds := startNATS(t, "bench", "a", "b")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	agentCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for name, engines := range map[string][]string{"a": nil, "b": {engine.Native}} {
		wg.Go(func() {
			if err := RunAgent(agentCtx, AgentConfig{URL: url, Auth: Auth{NkeyFile: seeds[name]}, Name: name, Engines: engines}); err != nil {
				t.Error(err)
			}
		})
	}
	defer func() { stop(); wg.Wait() }()
	c, err := connect(ctx, url, Auth{NkeyFile: seeds["bench"]}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	agents, err := waitAgents(ctx, c, 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"a": Installed(), "b": {engine.Native}}
	for _, a := range agents {
		if got := a.Machine.EngineNames(); !slices.Equal(got, want[a.Name]) {
			t.Errorf("agent %s offers %v, want %v", a.Name, got, want[a.Name])
		}
	}
}

// TestAgentStoppedAsItStarts: an agent whose context ends before it has
// registered has ended as asked: RunAgent returns no error.
func TestAgentStoppedAsItStarts(t *testing.T) {
	url, seeds := startNATS(t, "a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := RunAgent(ctx, AgentConfig{URL: url, Auth: Auth{NkeyFile: seeds["a"]}, Name: "a", Engines: []string{engine.Native}}); err != nil {
		t.Fatalf("RunAgent stopped before it registered: %v, want nil", err)
	}
}

// TestAckDeadlineIsThePlans: the agents of one kind share their kind's consumer; its ack
// deadline is the one the plan gives, whichever agents start before or after it.
func TestAckDeadlineIsThePlans(t *testing.T) {
	url, seeds := startNATS(t, "bench", "a", "b", "c")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	agentCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	startAgent := func(name string, log io.Writer) {
		wg.Go(func() {
			if err := RunAgent(agentCtx, AgentConfig{URL: url, Auth: Auth{NkeyFile: seeds[name]}, Name: name, Engines: []string{engine.Native},
				Log: slog.New(slog.NewTextHandler(log, nil))}); err != nil {
				t.Error(err)
			}
		})
	}
	defer func() { stop(); wg.Wait() }()
	startAgent("a", io.Discard)
	startAgent("b", io.Discard)
	c, err := connect(ctx, url, Auth{NkeyFile: seeds["bench"]}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	deadline := func(kind string) time.Duration {
		t.Helper()
		cons, err := c.js.Consumer(ctx, JobsStream, kindConsumer(kind))
		if err != nil {
			t.Fatal(err)
		}
		return cons.CachedInfo().Config.AckWait
	}
	plan := func(ackWait time.Duration) {
		t.Helper()
		tables, err := RunPlan(ctx, PlanConfig{URL: url, Auth: Auth{NkeyFile: seeds["bench"]}, Mode: Split, Cells: testCells(t, 2, 0),
			Engines: []string{engine.Native}, Agents: 2, AckWait: ackWait})
		if err != nil || len(tables) != 1 || tables[0].Done() != 2 {
			t.Fatalf("plan: %v, tables %+v", err, tables)
		}
	}
	plan(2 * time.Second)
	agents, err := listAgents(ctx, c)
	if err != nil || len(agents) < 2 {
		t.Fatalf("agents %+v (%v)", agents, err)
	}
	kind := agents[0].Machine.Kind
	if got := deadline(kind); got != 2*time.Second {
		t.Errorf("after a plan of 2s: the kind's ack deadline is %v", got)
	}
	ready := &cancelOn{text: `msg="agent ready"`, cancel: func() {}}
	readyCtx, isReady := context.WithCancel(ctx)
	ready.cancel = isReady
	startAgent("c", ready)
	<-readyCtx.Done() // c has set itself up
	if got := deadline(kind); got != 2*time.Second {
		t.Errorf("after agent c started: the kind's ack deadline is %v, want the plan's 2s", got)
	}
	plan(3 * time.Second)
	if got := deadline(kind); got != 3*time.Second {
		t.Errorf("after a plan of 3s: the kind's ack deadline is %v", got)
	}
}
