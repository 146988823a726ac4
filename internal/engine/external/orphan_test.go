package external

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The environment of a test binary started as a driver's parent by TestDriverDiesWithItsParent.
const (
	orphanPeerEnv  = "PEERS_TEST_ORPHAN_PEER"
	orphanCacheEnv = "PEERS_TEST_ORPHAN_CACHE"
)

// serveOrphanIfRequested makes this test binary a driver's parent when the test asks for
// one: it starts the peer, prints the driver's process id, and calls fib_rec(60), which
// runs until the process is killed.
func serveOrphanIfRequested() {
	name := os.Getenv(orphanPeerEnv)
	if name == "" {
		return
	}
	ctx := context.Background()
	p, err := Start(ctx, name, Options{CacheDir: os.Getenv(orphanCacheEnv)})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	pid, err := childOf(os.Getpid())
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("pid", pid)
	_, err = p.Call(ctx, "fib_rec", 1, []int{60})
	fmt.Println("error fib_rec(60) returned:", err)
	os.Exit(1)
}

// childOf returns the process id of the one child of the process ppid (Linux's /proc).
func childOf(ppid int) (int, error) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so parse after its ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(ppid) {
			return strconv.Atoi(filepath.Base(filepath.Dir(path)))
		}
	}
	return 0, fmt.Errorf("process %d has no child", ppid)
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// TestDriverDiesWithItsParent: a process that started a driver and is killed with SIGKILL
// mid-call (as package runner kills a worker at its time limit) takes the driver with it.
func TestDriverDiesWithItsParent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	for _, name := range []string{C, Java, NodeJS, PHP, PHPJIT, NodeWasm} {
		t.Run(name, func(t *testing.T) {
			start(t, name).Close() // skips when the runtime is missing; builds the driver
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), orphanPeerEnv+"="+name, orphanCacheEnv+"="+cacheDir)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the parent wrote %q: %v", line, err)
			}
			pidText, ok := strings.CutPrefix(strings.TrimSpace(line), "pid ")
			pid, err := strconv.Atoi(pidText)
			if !ok || err != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the parent wrote %q, want \"pid <n>\"", line)
			}
			time.Sleep(200 * time.Millisecond) // let the call start
			if !alive(pid) {
				t.Fatalf("driver %d is not running before its parent is killed", pid)
			}
			cmd.Process.Kill()
			cmd.Wait()
			for deadline := time.Now().Add(30 * time.Second); alive(pid); {
				if time.Now().After(deadline) {
					syscallKill(pid)
					t.Fatalf("driver %d still runs 30s after its parent was killed", pid)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// syscallKill ends a driver a failed test left behind.
func syscallKill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}
