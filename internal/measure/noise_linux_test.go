package measure

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/procfs"
	"github.com/wasmgap/wasmgap/kernels"
)

// spinEnv, set in a re-executed test binary, makes it spin for that many milliseconds
// of its own CPU time and exit (see TestMain).
const spinEnv = "MEASURE_TEST_SPIN_MS"

func TestMain(m *testing.M) {
	if ms, err := strconv.Atoi(os.Getenv(spinEnv)); err == nil {
		spinCPU(time.Duration(ms) * time.Millisecond)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// spinCPU keeps one core busy until this process has used d of CPU time.
func spinCPU(d time.Duration) {
	for {
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
			return
		}
		used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		if used >= d {
			return
		}
		for i := 0; i < 1_000_000; i++ {
			spinSink += i
		}
	}
}

var spinSink int

// spinCommand is this test binary re-executed to spin for d of CPU time.
func spinCommand(t *testing.T, d time.Duration) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), spinEnv+"="+strconv.Itoa(int(d/time.Millisecond)))
	return cmd
}

// ticks is d in /proc's clock ticks.
func ticks(d time.Duration) uint64 { return uint64(d.Seconds() * clockTicks) }

// A child's CPU time is this process tree's, whether the child ended and was waited for
// during the reading (this process's cutime, cstime) or is still alive at its end with
// the time of its own ended child (a descendant's cutime): an engine's driver process is
// the measurement, not another process.
func TestTreeCPUCountsChildren(t *testing.T) {
	const spin = 300 * time.Millisecond
	for _, waited := range []bool{true, false} {
		_, self0, _, _, ok := readCPU()
		if !ok {
			t.Fatal("readCPU failed")
		}
		cmd := spinCommand(t, spin)
		var stdin io.Closer
		if !waited {
			// The child spins, then blocks reading its stdin until the reading is done.
			cmd = exec.Command("sh", "-c", `"$0" -test.run='^$' && read x`, cmd.Path)
			cmd.Env = append(os.Environ(), spinEnv+"="+strconv.Itoa(int(spin/time.Millisecond)))
			w, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdin = w
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if waited {
			if err := cmd.Wait(); err != nil {
				t.Fatal(err)
			}
		} else {
			// Wait until the spinner has ended and its parent (sh) waits on its stdin.
			deadline := time.Now().Add(30 * time.Second)
			for {
				st, ok := readProcStat(cmd.Process.Pid)
				if ok && st.cpu >= ticks(spin)*8/10 || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		_, self1, _, _, ok := readCPU()
		if stdin != nil {
			stdin.Close()
			cmd.Wait()
		}
		if !ok {
			t.Fatal("readCPU failed")
		}
		if got, want := self1-self0, ticks(spin)*8/10; got < want {
			t.Errorf("child waited for %v: the tree's CPU grew by %d ticks, want at least %d (the child's %v)", waited, got, want, spin)
		}
	}
}

// A process outside this tree (a child's child, orphaned and adopted by init) that
// spins is another process: its time is in the machine's busy time, not in the tree's.
func TestTreeCPUExcludesOtherProcesses(t *testing.T) {
	const spin = 300 * time.Millisecond
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	done := dir + "/done"
	busy0, self0, _, _, ok := readCPU()
	if !ok {
		t.Fatal("readCPU failed")
	}
	// sh starts the spinner in the background and exits at once: the spinner is no
	// longer a descendant of this process.
	cmd := exec.Command("sh", "-c", `("$0" -test.run='^$'; touch "$1") >/dev/null 2>&1 </dev/null & exit 0`, exe, done)
	cmd.Env = append(os.Environ(), spinEnv+"="+strconv.Itoa(int(spin/time.Millisecond)))
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(done); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the spinner did not finish within 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	busy1, self1, _, _, ok := readCPU()
	if !ok {
		t.Fatal("readCPU failed")
	}
	if grew := self1 - self0; grew > ticks(spin)/2 {
		t.Errorf("the tree's CPU grew by %d ticks: the orphaned spinner's %v was counted as this process's", grew, spin)
	}
	if other := (busy1 - busy0) - (self1 - self0); other < ticks(spin)*8/10 {
		t.Errorf("other processes' CPU grew by %d ticks, want at least %d (the spinner's %v)", other, ticks(spin)*8/10, spin)
	}
}

func TestProcStatOf(t *testing.T) {
	st, err := procfs.ParseStat([]byte("42 (a (b) c) S 7 42 42 0 -1 4194560 100 0 0 0 11 12 13 14 20 0 1 0 5 0 0"))
	if err != nil {
		t.Fatal(err)
	}
	if got := procStatOf(st); got.ppid != 7 || got.cpu != 11+12+13+14 || got.faults != 100 {
		t.Errorf("kept %+v; want ppid 7, cpu 50, faults 100", got)
	}
}

// touchEngine's calls map 4 MiB of fresh memory, write a byte to each of its pages and
// unmap it: every call takes at least 1024 minor page faults.
type touchEngine struct{ *fakeEngine }

const touchPages = 1024

func (e touchEngine) Run(ctx context.Context, k *kernels.Kernel, args []int) (int64, error) {
	page := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, touchPages*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return 0, err
	}
	for i := 0; i < len(mem); i += page {
		mem[i] = 1
	}
	if err := syscall.Munmap(mem); err != nil {
		return 0, err
	}
	return e.fakeEngine.Run(ctx, k, args)
}

// A cell counts the page faults its calls take: a kernel touching 1024 fresh pages a call
// reads about 1024 a call, one touching none next to nothing.
func TestMeasureCountsPageFaults(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	ok := fakeRun{value: k.Expected([]int{40})}
	opts := Options{Runs: 6, Warmup: 1, MinSample: time.Millisecond}

	r := Measure(context.Background(), touchEngine{&fakeEngine{results: []fakeRun{ok}}}, k, []int{40}, opts, nil)
	if r.Failed() || r.Noise == nil {
		t.Fatalf("failure %q, noise %+v", r.Failure, r.Noise)
	}
	if f := r.Noise.FaultsPerCall; f < touchPages || f > 2*touchPages {
		t.Errorf("%.0f page faults per call, want about %d", f, touchPages)
	}

	r = Measure(context.Background(), &fakeEngine{results: []fakeRun{ok}}, k, []int{40}, opts, nil)
	if r.Failed() || r.Noise == nil {
		t.Fatalf("failure %q, noise %+v", r.Failure, r.Noise)
	}
	if f := r.Noise.FaultsPerCall; f > 1 {
		t.Errorf("%.2f page faults per call of a kernel that touches no memory", f)
	}
}
