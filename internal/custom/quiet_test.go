//go:build linux

package custom

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The warm-up does not start while a run is in flight, runs its go command at idle
// priority, stops it while a run goes on, continues it after and then ends as usual. A
// script stands for the go command: it says its pid and builds once told to.
func TestWarmKeepsOutOfRuns(t *testing.T) {
	dir := t.TempDir()
	pidFile, goOn := filepath.Join(dir, "pid"), filepath.Join(dir, "go-on")
	script := filepath.Join(dir, "go")
	text := "#!/bin/sh\necho $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile +
		"\nwhile [ ! -e " + goOn + " ]; do sleep 0.02; done\n: > kernel.wasm\n"
	if err := os.WriteFile(script, []byte(text), 0o700); err != nil {
		t.Fatal(err)
	}
	b := NewBuilder(Options{Dir: filepath.Join(dir, "custom"), Go: script})
	b.RunStarted()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	warmed := make(chan error, 1)
	go func() { warmed <- b.Warm(ctx) }()

	// Warm waits on the run: it asked for the runs' next change.
	waitFor(t, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.gate.warming && b.gate.changed != nil
	})
	if _, err := os.Stat(pidFile); err == nil {
		t.Fatal("the warm-up's go command started while a run was in flight")
	}
	b.RunEnded()
	var pid int
	waitFor(t, func() bool {
		data, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && pid > 0
	})
	if policy, nice := procStat(t, pid, 41), procStat(t, pid, 19); policy != strconv.Itoa(unix.SCHED_IDLE) || nice != "19" {
		t.Errorf("the go command runs under policy %s at nice %s, want SCHED_IDLE (%d) at 19", policy, nice, unix.SCHED_IDLE)
	}

	b.RunStarted()
	waitFor(t, func() bool { return procStat(t, pid, 3) == "T" })
	if !b.Warming() {
		t.Error("Warming() = false while the warm-up is stopped")
	}
	b.RunEnded()
	waitFor(t, func() bool { return procStat(t, pid, 3) != "T" })
	if err := os.WriteFile(goOn, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-warmed; err != nil {
		t.Fatalf("Warm = %v", err)
	}
	if b.Warming() {
		t.Error("Warming() = true after Warm returned")
	}
}

// procStat returns field n (numbered from 1, as proc(5) does) of /proc/PID/stat.
func procStat(t *testing.T, pid, n int) string {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return f[n-3]
}
