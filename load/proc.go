package load

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProcStats are a process's figures sampled during a run, as the source articles report them
// ("memory from 11 MB to 61 MB, CPU idle 65%").
type ProcStats struct {
	Pid        int     `json:"pid"`
	RSSBefore  int64   `json:"rss_before_bytes"`
	RSSPeak    int64   `json:"rss_peak_bytes"`
	RSSAfter   int64   `json:"rss_after_bytes"`
	CPUMean    float64 `json:"cpu_mean_percent"`    // of one core, over the run
	CPUPeak    float64 `json:"cpu_peak_percent"`    // highest sample, of one core
	SystemIdle float64 `json:"system_idle_percent"` // whole machine, over the run (sar's %idle)
	Samples    int     `json:"samples"`
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

type procSampler struct {
	pid     int
	every   time.Duration
	stopc   chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	stats   ProcStats
	t0      time.Time
	cpu0    int64
	idle0   int64
	total0  int64
	lastT   time.Time
	lastCPU int64
}

// startProcSampler reads the process's figures now and then every period until stop.
func startProcSampler(pid int, every time.Duration) (*procSampler, error) {
	rss, err := readRSS(pid)
	if err != nil {
		return nil, fmt.Errorf("sample process %d: %w (is it running, and is this Linux?)", pid, err)
	}
	cpu, err := readCPU(pid)
	if err != nil {
		return nil, fmt.Errorf("sample process %d: %w", pid, err)
	}
	s := &procSampler{pid: pid, every: every, stopc: make(chan struct{}), done: make(chan struct{})}
	s.stats = ProcStats{Pid: pid, RSSBefore: rss, RSSPeak: rss}
	s.t0, s.lastT = time.Now(), time.Now()
	s.cpu0, s.lastCPU = cpu, cpu
	s.idle0, s.total0, _ = readSystemCPU()
	go s.loop()
	return s, nil
}

func (s *procSampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-s.stopc:
			return
		case <-t.C:
			s.sample()
		}
	}
}

func (s *procSampler) sample() {
	rss, err1 := readRSS(s.pid)
	cpu, err2 := readCPU(s.pid)
	if err1 != nil || err2 != nil {
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Samples++
	s.stats.RSSAfter = rss
	s.stats.RSSPeak = max(s.stats.RSSPeak, rss)
	if dt := now.Sub(s.lastT).Seconds(); dt > 0 {
		pct := float64(cpu-s.lastCPU) / clockTicks / dt * 100
		s.stats.CPUPeak = max(s.stats.CPUPeak, pct)
	}
	s.lastT, s.lastCPU = now, cpu
}

func (s *procSampler) stop() *ProcStats {
	close(s.stopc)
	<-s.done
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	if dt := s.lastT.Sub(s.t0).Seconds(); dt > 0 {
		st.CPUMean = float64(s.lastCPU-s.cpu0) / clockTicks / dt * 100
	}
	if idle, total, err := readSystemCPU(); err == nil && total > s.total0 {
		st.SystemIdle = float64(idle-s.idle0) / float64(total-s.total0) * 100
	}
	return &st
}

// readRSS returns the resident set size from /proc/<pid>/status (VmRSS, in kB).
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := strings.Fields(string(rest))
			if len(f) < 1 {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse VmRSS %q: %w", rest, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// readCPU returns utime+stime of the process in clock ticks, from /proc/<pid>/stat.
func readCPU(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields after its closing ')' are plain.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("parse /proc/%d/stat: no ')'", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(f))
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse /proc/%d/stat CPU times", pid)
	}
	return ut + st, nil
}

// readSystemCPU returns the machine's idle and total jiffies from /proc/stat.
func readSystemCPU() (idle, total int64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("parse /proc/stat: %q", line)
	}
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parse /proc/stat: %w", err)
		}
		total += n
		if i == 3 || i == 4 { // idle, iowait
			idle += n
		}
	}
	return idle, total, nil
}
