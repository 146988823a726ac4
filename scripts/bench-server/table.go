//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/wasmgap/wasmgap/internal/benchtool"
)

// environment describes the machine and the programs' versions, for the table's header.
func environment(ctx context.Context, o *options) []string {
	program := func(name, bin string, args ...string) benchtool.Program {
		return benchtool.Program{Name: name, Path: bin, Args: args, Missing: o.missing[name]}
	}
	return benchtool.Environment(ctx, []benchtool.Program{
		program("wasmgap", o.wasmgap, "version"),
		program("php", o.php, "-v"),
		program("node", o.node, "--version"),
		program("nginx", o.nginx, "-v"),
		program("ab", o.ab, "-V"),
		program("wrk", o.wrk, "-v"),
	})
}

// printTable prints the header lines, the table and the method under it.
func printTable(w io.Writer, o *options, env []string, rows []row) {
	// The reference rates of the same run kind: nginx and the PHP chat.
	ref := func(key string) map[string]float64 {
		m := map[string]float64{}
		for _, r := range rows {
			if r.server == specOf(key).name && len(r.rps) > 0 {
				m[r.run.key] = benchtool.Median(r.rps)
			}
		}
		return m
	}
	nginx, php := ref("nginx"), ref("php")
	ratio := func(rate float64, refs map[string]float64, key string) string {
		if v, ok := refs[key]; ok && v > 0 {
			return fmt.Sprintf("%.2f", rate/v)
		}
		return "—"
	}

	benchtool.PrintHeader(w, o.markdown, env)
	t := benchtool.NewTable(w, o.markdown, "llrrrrrrrrll", "server", "run", "req/s (median)", "p99", "vs nginx", "vs PHP", "RSS before", "RSS peak", "RSS after", "CPU s / 10k req", "check", "req/s of each run")
	for _, r := range rows {
		if r.missing != "" {
			t.Row(r.server, r.run.label, "—", "—", "—", "—", "—", "—", "—", "—", r.missing, "")
			continue
		}
		check := "ok"
		if r.run.message {
			check = fmt.Sprintf("%d/%d delivered", r.delivered, r.sent)
		}
		if r.failure != "" {
			check = "FAILED: " + r.failure
		}
		if len(r.rps) == 0 {
			t.Row(r.server, r.run.label, "—", "—", "—", "—", mb(r.rssBefore), mb(r.rssPeak), mb(r.rssAfter), "—", check, "")
			continue
		}
		rate := benchtool.Median(r.rps)
		cpu := "—"
		switch {
		case r.requests > 0 && r.cpu == 0:
			// Under one clock tick (10 ms) over the runs: too few requests to tell.
			cpu = fmt.Sprintf("< %.2f", benchtool.ClockTick.Seconds()/float64(r.requests)*10000)
		case r.requests > 0:
			cpu = fmt.Sprintf("%.2f", r.cpu.Seconds()/float64(r.requests)*10000)
		}
		t.Row(r.server, r.run.label, strconv.FormatFloat(rate, 'f', 0, 64), benchtool.P99(r.run.tool, benchtool.Median(r.p99)),
			ratio(rate, nginx, r.run.key), ratio(rate, php, r.run.key),
			mb(r.rssBefore), mb(r.rssPeak), mb(r.rssAfter), cpu, check, benchtool.Rates(r.rps))
	}
	t.Flush()
	order := "one after the other, one server running at a time"
	if o.interleave {
		order = "every server started at once, the runs going round them rep by rep (-interleave)"
	}
	fmt.Fprintf(w, "\nServers: %s. req/s: the median of %d runs (the upper one of an even count); p99: the tool's own (ab: whole milliseconds); vs nginx, vs PHP: the same run against nginx and the PHP chat in this run. "+
		"RSS: the server's process group (VmRSS summed) before the runs, at their peak (sampled every 20 ms) and after them; "+
		"CPU: the group's user+system seconds over the runs per 10,000 requests answered. "+
		"ab without -k (HTTP/1.0, a connection per request, as in the article); wrk -t %d; wasmgap load and wrk keep connections open unless marked; "+
		"`wasmgap chat` runs with --send-rate -1 (the peers limit no sender); the message route's receiver must get every message answered; %s.\n",
		order, o.reps, o.wrkThr, o.procsNote())
}

func mb(b int64) string {
	if b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
}
