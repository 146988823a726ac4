package browser_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine/browser"
	"github.com/wasmgap/wasmgap/internal/headless"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/procfs"
	"github.com/wasmgap/wasmgap/internal/runner"
)

// orphanEnv makes this test binary the parent of a browser cell (as `wasmgap bench` is):
// it runs one long cell of the named engine until it is killed.
const orphanEnv = "BROWSER_TEST_ORPHAN_ENGINE"

func serveOrphanIfRequested() {
	name := os.Getenv(orphanEnv)
	if name == "" {
		return
	}
	// fib_rec(27), the most samples a cell takes, each of at least a second: a cell that
	// outlasts the test.
	jobs, err := runner.Plan{Engines: []string{name}, Kernels: []string{"fib_rec"}, Args: map[string]int{"n": 27},
		Options: measure.Options{Runs: runner.MaxJobRuns, Warmup: 1, MinSample: time.Second}, Timeout: time.Hour}.Jobs()
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	// The line the test waits for: the browser is up and the page loaded, the page's
	// worker about to run (the browser engine's run phase starts).
	var once sync.Once
	onProgress := func(p runner.Progress) {
		if p.Phase == measure.PhaseRun {
			once.Do(func() { fmt.Println(runningLine) })
		}
	}
	r, err := runner.Run(context.Background(), jobs[0], runner.Options{OnProgress: onProgress})
	fmt.Println("error: the cell ended:", r.Failure, err)
	os.Exit(1)
}

// runningLine is what the orphan prints once its cell runs.
const runningLine = "running"

// marked returns the live processes (zombies are not) whose environment holds marker (a
// TMPDIR of the test's own): every process of a cell inherits it, wherever it is in the
// process tree — a child started after another, or one that left the tree (Chromium's
// crashpad handler and Firefox's crash helper are children of init), which a walk down
// from the parent at one moment would miss.
func marked(marker string) []int {
	var pids []int
	environs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, path := range environs {
		dir := filepath.Dir(path)
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(path)
		if err != nil || !slices.Contains(strings.Split(string(env), "\x00"), marker) {
			continue
		}
		if st, err := procfs.ReadStat(pid); err == nil && st.State != 'Z' {
			pids = append(pids, pid)
		}
	}
	return pids
}

// lockedBuffer is an output two goroutines share: the command's copy, and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func command(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// kill -9 of the process that runs a browser cell (wasmgap bench, a server) mid-cell
// leaves no process behind: the worker dies with it (the parent-death signal), the browser
// with the worker, and the browser's own processes with the browser. Nor, once the next
// browser starts, the browser's profile, which no process of the cell lived to remove.
//
// The cell's processes are found by what they all inherit, the subtest's TMPDIR, not by a
// walk down the tree at one moment: on a busy machine a browser starts its processes over
// seconds, some leave the tree, and one that a snapshot missed could still write the
// profile while the next browser's start removes it. The test waits for the cell to run
// (the orphan's line), not for a fixed time.
func TestBrowserDiesWithBench(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	for _, name := range []string{browser.ChromiumWasm, browser.FirefoxJS} {
		t.Run(name, func(t *testing.T) {
			need(t, kindOf(name))
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp) // where the cell's browser, and the next, keep their profiles
			marker := "TMPDIR=" + tmp
			begin := time.Now()
			parent, exited, out := startOrphan(t, name)
			waitRunning(t, name, exited, out)
			t.Logf("the cell ran %v after its parent's start", time.Since(begin).Round(time.Millisecond))
			cell := marked(marker)
			if len(cell) < 4 {
				t.Fatalf("processes of the cell: %v, want the parent, the worker, the browser and its own", cell)
			}
			if made, _ := filepath.Glob(filepath.Join(tmp, "wasmgap-*")); len(made) == 0 {
				t.Fatalf("no profile in TMPDIR %s while the cell runs: the browser keeps it elsewhere", tmp)
			}
			if err := syscall.Kill(parent, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-exited
			killed := time.Now()
			waitGone(t, marker)
			t.Logf("the cell's %d processes were gone %v after the kill", len(cell), time.Since(killed).Round(time.Millisecond))
			next, err := headless.Start(context.Background(), kindOf(name), headless.Options{})
			if err != nil {
				t.Fatal(err)
			}
			next.Close()
			if left, _ := filepath.Glob(filepath.Join(tmp, "wasmgap-*")); len(left) > 0 {
				t.Errorf("after kill -9 of the cell's parent and the start and close of another %s, these profiles are left: %v", kindOf(name), left)
			}
		})
	}
}

// startOrphan starts this test binary as the parent of a cell of the named engine, and
// returns its pid, a channel closed when it has exited, and its output.
func startOrphan(t *testing.T, name string) (int, <-chan struct{}, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), orphanEnv+"="+name)
	out := new(lockedBuffer)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	return cmd.Process.Pid, exited, out
}

// waitRunning waits until the orphan says its cell runs: the browser up, the page loaded.
// The bound is for a cell that never starts, not a pace.
func waitRunning(t *testing.T, name string, exited <-chan struct{}, out *lockedBuffer) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Minute); !strings.Contains(out.String(), runningLine+"\n"); time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("the parent ended before its %s cell ran: %q", name, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the %s cell did not run in 5 minutes (the parent said %q)", name, out)
		}
	}
}

// waitGone waits until no process of the cell is left, and fails, killing them, when some
// outlive the bound.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		left := marked(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var lines []string
			for _, pid := range left {
				lines = append(lines, fmt.Sprintf("%d %.100s", pid, command(pid)))
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("a minute after kill -9 of the cell's parent these still run:\n%s", strings.Join(lines, "\n"))
		}
	}
}
