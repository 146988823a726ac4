package explain

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/internal/engine"
)

// Profile is where a timed run's samples fell.
type Profile struct {
	// Samples is how many samples perf took of the process in all; InFunction how many
	// fell on the listing's instructions (the lines' Samples add up to it), Elsewhere
	// the rest (the caller's loop, the runtime, the kernel): InFunction + Elsewhere =
	// Samples.
	Samples    int `json:"samples"`
	InFunction int `json:"in_function"`
	Elsewhere  int `json:"elsewhere"`
	// Duration is how long perf sampled; Event is what it counted.
	Duration time.Duration `json:"duration_ns,omitempty"`
	Event    string        `json:"event,omitempty"`
	// Refused says why there is no profile (perf missing or refused, an engine whose code
	// does not run in a process perf can see).
	Refused string `json:"refused,omitempty"`
}

// perfEvent is the one event sampled: the VMs this runs on have no hardware counters.
const perfEvent = "cpu-clock"

// perfRecord samples process pid with perf record for d and returns the sampled
// instruction addresses. start is called once perf is attached.
func perfRecord(ctx context.Context, pid int, d time.Duration, start func()) ([]uint64, error) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		return nil, fmt.Errorf("perf %w (apt-get install linux-perf)", errNoTool)
	}
	dir, err := os.MkdirTemp("", "wasmgap-perf-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "perf.data")
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	rec := childproc.Command(ctx, perf, "record", "-q", "-e", perfEvent, "-p", strconv.Itoa(pid), "-o", data,
		"--", "sleep", strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
	var stderr bytes.Buffer
	rec.Stderr = &stderr
	if err := childproc.Start(rec); err != nil {
		return nil, fmt.Errorf("perf record: %w", err)
	}
	if start != nil {
		start()
	}
	if err := rec.Wait(); err != nil {
		return nil, fmt.Errorf("perf record refused: %w%s", err, firstLineOf(stderr.String()))
	}
	out, _, err := run(childproc.Command(ctx, perf, "script", "-i", data, "-F", "ip"))
	if err != nil {
		return nil, fmt.Errorf("perf script: %w", err)
	}
	var ips []uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if ip, err := strconv.ParseUint(strings.TrimSpace(sc.Text()), 16, 64); err == nil {
			ips = append(ips, ip)
		}
	}
	if len(ips) == 0 {
		return nil, errors.New("perf took no sample of the run")
	}
	return ips, nil
}

// attribute counts the samples that fell on each of l's instructions.
func attribute(l *Listing, ips []uint64, d time.Duration) {
	p := &Profile{Samples: len(ips), Duration: d, Event: perfEvent}
	for i := range l.Lines {
		l.Lines[i].Samples = 0
	}
	for _, ip := range ips {
		if l.Addr == 0 || ip < l.Addr || ip >= l.Addr+uint64(l.Bytes) {
			continue
		}
		off := int(ip - l.Addr)
		i := sort.Search(len(l.Lines), func(i int) bool { return l.Lines[i].Offset > off }) - 1
		if i < 0 {
			continue
		}
		l.Lines[i].Samples++
		p.InFunction++
	}
	p.Elsewhere = p.Samples - p.InFunction
	l.Profile = p
}

// refuseProfile marks every listing with why it has no profile.
func refuseProfile(ls []Listing, why string) {
	for i := range ls {
		ls[i].Profile = &Profile{Refused: why}
	}
}

// profileInProcess samples a timed run of an engine whose code runs in this process,
// under perf record -p of this process, and attributes the samples to its machine-code
// listings.
func profileInProcess(ctx context.Context, e explainer, r request, ls []Listing) {
	call, done, err := e.inProcess(ctx, r)
	if err != nil {
		refuseProfile(ls, err.Error())
		return
	}
	defer done()
	d := r.opts.profileTime()
	var stop func() error
	ips, err := perfRecord(ctx, os.Getpid(), d, func() { stop = callUntilStopped(call) })
	if stop != nil {
		if runErr := stop(); err == nil && runErr != nil {
			err = runErr
		}
	}
	for i := range ls {
		if ls[i].Kind != KindMachine {
			continue
		}
		if err != nil {
			ls[i].Profile = &Profile{Refused: err.Error()}
			continue
		}
		attribute(&ls[i], ips, d)
	}
}

// nativeCall calls the kernel as the native engine does: the Go function of this binary.
func nativeCall(_ context.Context, r request) (func() error, func(), error) {
	return func() error { r.k.Call(r.args); return nil }, func() {}, nil
}

// wazeroCall loads the module r's wazero engine runs (after wasm-opt for
// wazero-compiler-opt) from explain's own compilation cache, where its listing was read.
func wazeroCall(ctx context.Context, r request) (func() error, func(), error) {
	module, err := moduleBytes()
	if r.engine == engine.WazeroCompilerOpt {
		module, err = optimizedModule(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	e, _, err := loadWazero(ctx, module)
	if err != nil {
		return nil, nil, err
	}
	call := func() error { _, err := e.Run(ctx, r.k, r.args); return err }
	return call, func() { _ = e.Close(ctx) }, nil
}

// executableBase finds where this process mapped code that starts with prefix: wazero's
// compiled module, an anonymous executable mapping whose first bytes are prefix.
func executableBase(prefix []byte) (uint64, error) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		return 0, err
	}
	defer mem.Close()
	buf := make([]byte, len(prefix))
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		// An anonymous mapping has no path: address, perms, offset, dev, inode.
		if len(f) != 5 || !strings.HasPrefix(f[1], "r-x") {
			continue
		}
		lo, _, _ := strings.Cut(f[0], "-")
		base, err := strconv.ParseUint(lo, 16, 64)
		if err != nil {
			continue
		}
		if _, err := mem.ReadAt(buf, int64(base)); err == nil && bytes.Equal(buf, prefix) {
			return base, nil
		}
	}
	return 0, errors.New("wazero's compiled code is not among this process's executable mappings")
}

// callUntilStopped calls call over and over in a goroutine until stop is called; stop
// waits for the call under way and returns the error that ended the calls early, if any.
func callUntilStopped(call func() error) (stop func() error) {
	quit := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for {
			select {
			case <-quit:
				done <- nil
				return
			default:
			}
			if err := call(); err != nil {
				done <- err
				return
			}
		}
	}()
	return func() error {
		close(quit)
		return <-done
	}
}
