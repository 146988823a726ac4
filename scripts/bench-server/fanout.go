//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/benchtool"
	"github.com/wasmgap/wasmgap/internal/gotool"
	"github.com/wasmgap/wasmgap/load"
)

// With -fanout N, bench-server measures the chat beside Centrifugo, the real-time server
// its users would pick instead, on what such a server is for: N subscribers, one broadcast
// at a time. Per rep, transport and server (the servers alternated within a rep, each
// started fresh for its run, on a free port of 127.0.0.1):
//
//   - `wasmgap load ws-fanout` (or sse-fanout) in a process of its own logs N receivers in,
//     then sends -broadcasts messages at -broadcast-rate per second to everyone: the chat's
//     send to "all", Centrifugo's server API publish into the receivers' channel. The same
//     receivers read both servers (load.ServerCentrifugo speaks Centrifugo's JSON protocol
//     over WebSocket and its uni-directional SSE); each delivery's latency runs from the
//     send's start to the receipt, so p50/p99 include the publish.
//   - The load generator reads the server's figures at the phase boundaries (--pid): CPU
//     time over the broadcasts and their drain, per message; resident memory with every
//     receiver in and idle, less before the first login, per receiver; the time to log
//     every receiver in.
//   - The floor (floor.go) is measured as the servers are, over the broadcasts only: the
//     chat's and Centrifugo's delivery p99 and CPU per broadcast are given as multiples of
//     its own.
//   - Churn: `wasmgap load churn`, -churn connections per second for -churn-time, each a
//     WebSocket that logs in, waits for the server's first answer (the chat's welcome,
//     Centrifugo's connect reply) and closes; the errors, the connect time's p50 and p99
//     (from when each login was due) and the server's CPU per connection.
//
// Centrifugo runs with its memory engine and a config this program writes: connection
// tokens (HS256) minted by the load generator, whose "channels" claim subscribes the
// connection on the server's side over both transports; the uni-directional SSE transport
// on; history on for the channel (1,000 messages, 5 minutes), as the chat keeps a replay
// window by default; the server API behind a key. `wasmgap chat` runs with its defaults
// (durable store, fsync on), the per-address limits lifted (every receiver comes from
// 127.0.0.1) and --send-rate -1.

// fanoutServers are the servers the fan-out mode measures: the floor (floor.go) only over
// the broadcasts.
var fanoutServers = []string{"wasmgap", "centrifugo", "floor"}

// centrifugoKeys are the secrets of the Centrifugo a run starts: loopback only, per run.
const (
	centrifugoAPIKey = "bench-server-api-key"
	centrifugoSecret = "bench-server-token-secret-of-at-least-32-bytes"
)

// fanoutRow is one server on one transport: the medians of its runs.
type fanoutRow struct {
	server, transport   string
	p50, p99            []time.Duration
	cpuPerMsg           []time.Duration
	rssPerConn          []int64
	connectAll          []time.Duration
	sent, delivered     int64
	expected, lost, dup int64
	err                 error
}

// churnRow is one server's churn runs.
type churnRow struct {
	server   string
	attempts int64
	errors   int64
	p50, p99 []time.Duration
	cpuPer   []time.Duration // the server's CPU time per connection
	err      error
}

// runFanout runs the fan-out and churn measurements and prints their tables.
func runFanout(ctx context.Context, o *options, stdout, stderr io.Writer) int {
	if slices.Contains(o.servers, "centrifugo") && o.centrifugo == "" {
		p, err := gotool.Centrifugo.Ensure(ctx, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "bench-server: %v (or give -centrifugo PATH)\n", err)
			return 1
		}
		o.centrifugo = p
	}
	env := benchtool.Environment(ctx, []benchtool.Program{
		{Name: "wasmgap", Path: o.wasmgap, Args: []string{"version"}},
		{Name: "centrifugo", Path: o.centrifugo, GoBuildInfo: true, Missing: missingIf(o.centrifugo == "", "not measured")},
	})
	var rows []*fanoutRow
	for _, tr := range []string{"ws", "sse"} {
		for _, s := range o.servers {
			rows = append(rows, &fanoutRow{server: s, transport: tr})
		}
	}
	churn := map[string]*churnRow{}
	for _, s := range o.servers {
		churn[s] = &churnRow{server: s}
	}
	for rep := range o.reps {
		order := slices.Clone(o.servers)
		if rep%2 == 1 {
			slices.Reverse(order) // neither server always goes first
		}
		for _, tr := range []string{"ws", "sse"} {
			for _, s := range order {
				if ctx.Err() != nil {
					break
				}
				r := rows[slices.IndexFunc(rows, func(r *fanoutRow) bool { return r.server == s && r.transport == tr })]
				fmt.Fprintf(stderr, "  fan-out %s over %s, %d receivers: run %d\n", s, tr, o.fanout, rep+1)
				if err := fanoutRun(ctx, o, r); err != nil {
					r.err = err
					fmt.Fprintf(stderr, "    %v\n", err)
				}
			}
		}
		for _, s := range order {
			if ctx.Err() != nil || o.churn == 0 {
				break
			}
			if s == "floor" {
				continue // it logs no one in
			}
			fmt.Fprintf(stderr, "  churn %s, %d/s for %s: run %d\n", s, o.churn, o.churnTime, rep+1)
			if err := churnRun(ctx, o, churn[s]); err != nil {
				churn[s].err = err
				fmt.Fprintf(stderr, "    %v\n", err)
			}
		}
	}
	benchtool.PrintHeader(stdout, o.markdown, env)
	printFanout(stdout, o, rows, churn)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "bench-server: interrupted: every server started was stopped")
		return 130
	}
	return 0
}

func missingIf(cond bool, why string) string {
	if cond {
		return why
	}
	return ""
}

// fanoutRun runs one fan-out over one transport against a fresh server and adds the figures
// to r.
func fanoutRun(ctx context.Context, o *options, r *fanoutRow) error {
	rep, err := loadRun(ctx, o, r.server, r.transport+"-fanout", "-s", strconv.Itoa(o.fanout), "-n", strconv.Itoa(o.broadcasts),
		"-R", strconv.FormatFloat(o.broadcastRate, 'f', -1, 64), "--login-time", "5m")
	if err != nil {
		return err
	}
	d := rep.Delivery
	if d == nil {
		return fmt.Errorf("wasmgap load's report has no delivery figures")
	}
	if d.Welcomed < d.Receivers {
		return fmt.Errorf("only %d of %d receivers logged in", d.Welcomed, d.Receivers)
	}
	r.sent += d.Sent
	r.expected += d.Expected
	r.delivered += d.Delivered
	r.lost += d.Lost
	r.dup += d.Duplicated
	r.p50 = append(r.p50, rep.Latency.P50)
	r.p99 = append(r.p99, rep.Latency.P99)
	r.cpuPerMsg = append(r.cpuPerMsg, rep.ServerPhases.CPUPerMessage)
	r.rssPerConn = append(r.rssPerConn, rep.ServerPhases.RSSPerReceiver)
	r.connectAll = append(r.connectAll, d.RampUp)
	return nil
}

// churnRun runs `wasmgap load churn` against a fresh server: o.churn WebSocket logins per
// second for o.churnTime, each closed at the server's first answer, at most maxChurnInFlight
// open at once. It adds the logins, errors, connect times (from when each login was due) and
// the server's CPU per login to c.
func churnRun(ctx context.Context, o *options, c *churnRow) error {
	rep, err := loadRun(ctx, o, c.server, "churn", "-R", strconv.Itoa(o.churn), "-d", o.churnTime.String(),
		"--login-concurrency", strconv.Itoa(maxChurnInFlight))
	if err != nil {
		return err
	}
	if rep.OK == 0 {
		return fmt.Errorf("no login succeeded: %v", rep.ErrorExamples)
	}
	c.attempts += rep.Sent
	c.errors += rep.Sent - rep.OK
	c.p50 = append(c.p50, rep.Latency.P50)
	c.p99 = append(c.p99, rep.Latency.P99)
	c.cpuPer = append(c.cpuPer, rep.ServerPhases.CPUPerLogin)
	if rep.OK < rep.Sent {
		c.err = fmt.Errorf("%d of %d logins failed: %v", rep.Sent-rep.OK, rep.Sent, rep.ErrorExamples)
	}
	return nil
}

// maxChurnInFlight bounds the churn's connections open at once: past it, the next login
// waits, and its connect time (counted from when it was due) shows the wait.
const maxChurnInFlight = 2000

// loadRun starts the server, runs `wasmgap load` with args in a process of its own against it,
// reading the server's figures (--pid), and returns its report, which holds them.
func loadRun(ctx context.Context, o *options, server string, args ...string) (*load.Report, error) {
	srv, err := startFanoutServer(ctx, o, server)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	args = append([]string{"load"}, append(args, "--target", srv.url+"/", "--pid", strconv.Itoa(srv.cmd.Process.Pid),
		"--format", "json", "--progress", "off", "--max-time", "10m")...)
	if server == "centrifugo" {
		args = append(args, "--server", load.ServerCentrifugo, "--centrifugo-api-key", centrifugoAPIKey,
			"--centrifugo-secret", centrifugoSecret)
	}
	cmd := exec.Command(o.wasmgap, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// A run that lost messages or logins still reports them (exit 3, 1): read the report.
	runErr := benchtool.Run(ctx, cmd, 11*time.Minute)
	var rep load.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		if runErr != nil {
			return nil, fmt.Errorf("wasmgap load: %v: %s", runErr, strings.TrimSpace(errb.String()))
		}
		return nil, fmt.Errorf("wasmgap load's report: %w: %.300q", err, out.Bytes())
	}
	if rep.ServerPhases == nil {
		return nil, fmt.Errorf("wasmgap load's report has no server figures: %.300q", out.Bytes())
	}
	return &rep, nil
}

// startFanoutServer starts the chat or Centrifugo, fresh, in a temporary folder of its own.
func startFanoutServer(ctx context.Context, o *options, name string) (*server, error) {
	dir, err := os.MkdirTemp("", "bench-fanout-"+name+"-")
	if err != nil {
		return nil, err
	}
	addr, err := benchtool.FreeAddr()
	if err != nil {
		return nil, err
	}
	var cmd *exec.Cmd
	switch name {
	case "wasmgap":
		cmd = exec.Command(o.wasmgap, "chat", "--addr", addr, "--data", filepath.Join(dir, "data"), "--send-rate", "-1",
			"--max-conns-per-addr", "-1", "--max-open-conns-per-addr", "-1")
	case "centrifugo":
		conf := filepath.Join(dir, "config.json")
		if err := os.WriteFile(conf, centrifugoConfig(addr), 0o644); err != nil {
			return nil, err
		}
		cmd = exec.Command(o.centrifugo, "--config", conf)
	case "floor":
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(self)
	default:
		return nil, fmt.Errorf("no fan-out server %q: allowed %s", name, strings.Join(fanoutServers, ", "))
	}
	cmd.Env = append(o.goServerEnv(), floorEnv+"="+addr) // read by the floor only
	ready := "/health"
	if name == "wasmgap" {
		ready = "/"
	}
	s, err := launch(ctx, cmd, name, dir, "http://"+addr, ready)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.removeDir = dir
	return s, nil
}

// centrifugoConfig is the configuration of a Centrifugo v6 on addr (see the comment at the
// top of this file for what it turns on).
func centrifugoConfig(addr string) []byte {
	host, p, _ := strings.Cut(addr, ":")
	port, _ := strconv.Atoi(p)
	conf := map[string]any{
		"log": map[string]any{"level": "error"},
		"http_server": map[string]any{
			"address": host,
			"port":    port,
		},
		"client": map[string]any{
			"token":           map[string]any{"hmac_secret_key": centrifugoSecret},
			"allowed_origins": []string{"*"},
		},
		"http_api": map[string]any{"key": centrifugoAPIKey},
		"health":   map[string]any{"enabled": true},
		"uni_sse":  map[string]any{"enabled": true},
		"channel": map[string]any{
			"without_namespace": map[string]any{"history_size": 1000, "history_ttl": "300s"},
		},
	}
	b, _ := json.MarshalIndent(conf, "", "  ")
	return b
}

func printFanout(w io.Writer, o *options, rows []*fanoutRow, churn map[string]*churnRow) {
	// The ratios are to the floor's p99 and CPU and to Centrifugo's memory and connect time,
	// of the same transport, in the same run.
	ref := map[string]*fanoutRow{}
	for _, r := range rows {
		if r.server != "wasmgap" && len(r.p99) > 0 {
			ref[r.server+" "+r.transport] = r
		}
	}
	ratio := func(v, base float64) string {
		if base <= 0 {
			return ""
		}
		return fmt.Sprintf(" (%.2f×)", v/base)
	}
	fmt.Fprintf(w, "Fan-out: %d receivers, %d broadcasts at %g/s, runs per row: %d (medians; × is to the floor's delivery p99 and CPU, to Centrifugo's RSS and connect time, on the same transport; the floor writes each broadcast's frame to every connection and does nothing else); %s\n\n",
		o.fanout, o.broadcasts, o.broadcastRate, o.reps, o.procsNote())
	t := benchtool.NewTable(w, o.markdown, "llrrrrrrrr", "server", "transport", "delivery p50", "delivery p99", "server CPU / broadcast", "server RSS / idle connection", "connect all", "delivered / expected", "lost", "duplicated")
	for _, r := range rows {
		if len(r.p99) == 0 {
			msg := "no run finished"
			if r.err != nil {
				msg = "failed: " + r.err.Error()
			}
			t.Row(serverName(r.server), r.transport, msg, "", "", "", "", "", "", "")
			continue
		}
		var p99r, cpur, rssr, conr string
		p99, cpu, rss, con := benchtool.Median(r.p99), benchtool.Median(r.cpuPerMsg), benchtool.Median(r.rssPerConn), benchtool.Median(r.connectAll)
		if f := ref["floor "+r.transport]; f != nil && f != r {
			p99r = ratio(float64(p99), float64(benchtool.Median(f.p99)))
			if cpu > 0 { // not a bound
				cpur = ratio(float64(cpu), float64(benchtool.Median(f.cpuPerMsg)))
			}
		}
		if c := ref["centrifugo "+r.transport]; c != nil && c != r && r.server != "floor" {
			rssr = ratio(float64(rss), float64(benchtool.Median(c.rssPerConn)))
			conr = ratio(float64(con), float64(benchtool.Median(c.connectAll)))
		}
		cpuCell := ms(cpu)
		if cpu == 0 { // under one clock tick over the broadcasts: too little to tell
			cpuCell = "< " + ms(benchtool.ClockTick/time.Duration(o.broadcasts))
		}
		t.Row(serverName(r.server), r.transport, ms(benchtool.Median(r.p50)), ms(p99)+p99r, cpuCell+cpur,
			fmt.Sprintf("%.1f KB%s", float64(rss)/1000, rssr), ms(con)+conr,
			fmt.Sprintf("%d / %d", r.delivered, r.expected), strconv.FormatInt(r.lost, 10), strconv.FormatInt(r.dup, 10))
	}
	t.Flush()
	if o.churn == 0 {
		return
	}
	fmt.Fprintf(w, "\nChurn: %d WebSocket connects per second for %s, each closed after the server's first answer\n\n", o.churn, o.churnTime)
	t = benchtool.NewTable(w, o.markdown, "lrrrrr", "server", "connections", "errors", "connect p50", "connect p99", "server CPU / connection")
	for _, s := range o.servers {
		c := churn[s]
		if s == "floor" {
			continue
		}
		if len(c.p99) == 0 {
			msg := "no run finished"
			if c.err != nil {
				msg = "failed: " + c.err.Error()
			}
			t.Row(serverName(s), msg, "", "", "", "")
			continue
		}
		t.Row(serverName(s), strconv.FormatInt(c.attempts, 10), strconv.FormatInt(c.errors, 10), ms(benchtool.Median(c.p50)),
			ms(benchtool.Median(c.p99)), ms(benchtool.Median(c.cpuPer)))
	}
	t.Flush()
}

func serverName(key string) string {
	switch key {
	case "centrifugo":
		return "Centrifugo " + gotool.Centrifugo.Version
	case "floor":
		return "floor (writes only)"
	}
	return "wasmgap chat"
}

// ms prints a duration in milliseconds, to a precision that fits its size.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 1:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.3f ms", v)
}

// fanoutOptions checks the fan-out mode's settings: its servers (wasmgap and centrifugo;
// both when -servers was not given) and bounds.
func fanoutOptions(o *options, fs *flag.FlagSet, servers string) (*options, int, error) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "servers" })
	o.servers = nil
	if !given {
		servers = strings.Join(fanoutServers, ",")
	}
	for _, s := range strings.Split(servers, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(fanoutServers, s) {
			return nil, 2, fmt.Errorf("-fanout: server %q: allowed %s", s, strings.Join(fanoutServers, ", "))
		}
		if !slices.Contains(o.servers, s) {
			o.servers = append(o.servers, s)
		}
	}
	switch {
	case o.fanout > load.MaxReceivers:
		return nil, 2, fmt.Errorf("-fanout %d: allowed 1 to %d", o.fanout, load.MaxReceivers)
	case o.broadcasts < 1 || o.broadcasts > load.MaxMessages:
		return nil, 2, fmt.Errorf("-broadcasts %d: allowed 1 to %d", o.broadcasts, load.MaxMessages)
	case o.broadcastRate <= 0 || o.broadcastRate > 10000:
		return nil, 2, fmt.Errorf("-broadcast-rate %g: allowed above 0, up to 10000", o.broadcastRate)
	case o.churn < 0 || o.churn > 20000:
		return nil, 2, fmt.Errorf("-churn %d: allowed 0 to 20000 per second", o.churn)
	case o.churnTime < time.Second || o.churnTime > 5*time.Minute:
		return nil, 2, fmt.Errorf("-churn-time %v: allowed 1s to 5m", o.churnTime)
	}
	full, err := exec.LookPath(o.wasmgap)
	if err != nil {
		return nil, 1, fmt.Errorf("wasmgap binary %s: %v (build it: go build -o bin/wasmgap ./cmd/wasmgap)", o.wasmgap, err)
	}
	if o.wasmgap, err = filepath.Abs(full); err != nil {
		return nil, 1, err
	}
	if o.centrifugo != "" {
		if o.centrifugo, err = exec.LookPath(o.centrifugo); err != nil {
			return nil, 1, fmt.Errorf("-centrifugo: %v", err)
		}
	}
	return o, 0, nil
}
