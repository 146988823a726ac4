package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat: 100 on every Linux
// architecture Go runs on.
const clockTicks = 100

// groupPIDs lists the processes of process group pgid (a server and, for nginx, its workers).
func groupPIDs(pgid int) []int {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f := statFields(b)
		if len(f) < 13 {
			continue
		}
		if g, _ := strconv.Atoi(string(f[2])); g == pgid {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// statFields are the fields of /proc/PID/stat after the command name (which may hold
// spaces and parentheses): [0] is the state, [2] the process group, [11] utime, [12] stime.
func statFields(b []byte) [][]byte {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return bytes.Fields(b[i+1:])
}

// cpuTime is the user + system time the processes have used so far (the processes that
// exited are not counted: a server's processes live for the whole run).
func cpuTime(pids []int) time.Duration {
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		f := statFields(b)
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(string(f[11]), 10, 64)
		s, _ := strconv.ParseInt(string(f[12]), 10, 64)
		ticks += u + s
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// rss is the sum of the processes' resident memory in bytes (VmRSS).
func rss(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			continue
		}
		i := bytes.Index(b, []byte("\nVmRSS:"))
		if i < 0 {
			continue
		}
		line := b[i+len("\nVmRSS:"):]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		f := bytes.Fields(line) // "12345", "kB"
		if len(f) > 0 {
			kb, _ := strconv.ParseInt(string(f[0]), 10, 64)
			total += kb << 10
		}
	}
	return total
}

// rssSampler records the peak of rss(pids), sampled every 20 ms until stop.
type rssSampler struct {
	pids  []int
	stopc chan struct{}
	wg    sync.WaitGroup
	peak  int64
}

func sampleRSS(pids []int) *rssSampler {
	s := &rssSampler{pids: pids, stopc: make(chan struct{}), peak: rss(pids)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.stopc:
				return
			case <-t.C:
				s.peak = max(s.peak, rss(s.pids))
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the peak, one last sample included.
func (s *rssSampler) stop() int64 {
	close(s.stopc)
	s.wg.Wait()
	return max(s.peak, rss(s.pids))
}
