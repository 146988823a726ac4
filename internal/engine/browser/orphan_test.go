package browser_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine/browser"
	"github.com/wasmgap/wasmgap/internal/headless"
	"github.com/wasmgap/wasmgap/internal/measure"
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
	r, err := runner.Run(context.Background(), jobs[0], runner.Options{})
	fmt.Println("error: the cell ended:", r.Failure, err)
	os.Exit(1)
}

// procs maps every process id to its parent's (Linux's /proc).
func procs() map[int]int {
	parents := map[int]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		pid, err1 := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		ppid, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil && f[0] != "Z" {
			parents[pid] = ppid
		}
	}
	return parents
}

// descendants returns the processes below root.
func descendants(root int) []int {
	parents := procs()
	below := map[int]bool{root: true}
	for changed := true; changed; {
		changed = false
		for pid, ppid := range parents {
			if below[ppid] && !below[pid] {
				below[pid], changed = true, true
			}
		}
	}
	delete(below, root)
	var out []int
	for pid := range below {
		out = append(out, pid)
	}
	return out
}

func command(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// kill -9 of the process that runs a browser cell (wasmgap bench, a server) mid-cell
// leaves no process behind: the worker dies with it (the parent-death signal), the browser
// with the worker, and the browser's own processes with the browser. Nor, once the next
// browser starts, the browser's profile, which no process of the cell lived to remove.
func TestBrowserDiesWithBench(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	for _, name := range []string{browser.ChromiumWasm, browser.FirefoxJS} {
		t.Run(name, func(t *testing.T) {
			need(t, kindOf(name))
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp) // where the cell's browser, and the next, keep their profiles
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), orphanEnv+"="+name)
			out := new(strings.Builder)
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			parent := cmd.Process.Pid
			defer cmd.Process.Kill()
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			// Wait for the browser: a descendant of the parent whose command names it.
			browserName := map[string]string{browser.ChromiumWasm: "chrom", browser.FirefoxJS: "firefox"}[name]
			var below []int
			for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
				below = descendants(parent)
				found := false
				for _, pid := range below {
					found = found || strings.Contains(command(pid), browserName)
				}
				if found {
					break
				}
				select {
				case <-exited:
					t.Fatalf("the parent ended before its %s cell started a browser: %q", name, out)
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("no %s process below the parent after 2 minutes (it said %q)", name, out)
				}
			}
			time.Sleep(3 * time.Second) // the page loads, the worker starts: the cell runs
			below = descendants(parent)
			if len(below) < 3 {
				t.Fatalf("processes below the parent: %v, want the worker, the browser and its own", below)
			}
			if made, _ := filepath.Glob(filepath.Join(tmp, "wasmgap-*")); len(made) == 0 {
				t.Fatalf("no profile in TMPDIR %s while the cell runs: the browser keeps it elsewhere", tmp)
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-exited
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				var left []string
				for _, pid := range below {
					if syscall.Kill(pid, 0) == nil {
						if _, alive := procs()[pid]; alive {
							left = append(left, fmt.Sprintf("%d %.100s", pid, command(pid)))
						}
					}
				}
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					for _, pid := range below {
						syscall.Kill(pid, syscall.SIGKILL)
					}
					t.Fatalf("30 s after kill -9 of the cell's parent these still run:\n%s", strings.Join(left, "\n"))
				}
			}
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
