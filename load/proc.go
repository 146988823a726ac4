package load

import (
	"fmt"
	"sync"
	"time"

	"github.com/wasmgap/wasmgap/internal/benchtool"
	"github.com/wasmgap/wasmgap/internal/procfs"
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

type procSampler struct {
	pid     int
	every   time.Duration
	stopc   chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	stats   ProcStats
	t0      time.Time
	cpu0    time.Duration
	idle0   int64
	total0  int64
	lastT   time.Time
	lastCPU time.Duration
}

// startProcSampler reads the process's figures now and then every period until stop.
func startProcSampler(pid int, every time.Duration) (*procSampler, error) {
	rss, err := benchtool.ProcessRSS(pid)
	if err != nil {
		return nil, fmt.Errorf("sample process %d: %w (is it running, and is this Linux?)", pid, err)
	}
	cpu, err := benchtool.ProcessCPU(pid)
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
	rss, err1 := benchtool.ProcessRSS(s.pid)
	cpu, err2 := benchtool.ProcessCPU(s.pid)
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
		pct := (cpu - s.lastCPU).Seconds() / dt * 100
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
		st.CPUMean = (s.lastCPU - s.cpu0).Seconds() / dt * 100
	}
	if idle, total, err := readSystemCPU(); err == nil && total > s.total0 {
		st.SystemIdle = float64(idle-s.idle0) / float64(total-s.total0) * 100
	}
	return &st
}

// readSystemCPU returns the machine's idle and total jiffies from /proc/stat.
func readSystemCPU() (idle, total int64, err error) {
	c, err := procfs.SystemCPU()
	if err != nil {
		return 0, 0, err
	}
	for i, n := range c {
		total += int64(n)
		if i == 3 || i == 4 { // idle, iowait
			idle += int64(n)
		}
	}
	return idle, total, nil
}
