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

// ServerPhases are the server's figures (--pid) at the boundaries of a chat scenario's
// phases: what logging the receivers in cost it, what holding them idle costs, and what the
// messages cost. CPU is the process's user and system time, RSS its resident memory.
type ServerPhases struct {
	RSSBefore int64         `json:"rss_before_bytes"` // before the first login
	RSSIdle   int64         `json:"rss_idle_bytes"`   // every receiver logged in, nothing sent yet
	CPULogin  time.Duration `json:"cpu_login_ns"`     // over the login
	CPUSend   time.Duration `json:"cpu_send_ns"`      // over the sends and the drain
	// RSSPerReceiver is (RSSIdle − RSSBefore) / receivers welcomed, CPUPerLogin CPULogin /
	// receivers welcomed (churn: / logins tried; its login phase is the whole run);
	// CPUPerMessage is CPUSend / messages accepted.
	RSSPerReceiver int64         `json:"rss_per_receiver_bytes"`
	CPUPerLogin    time.Duration `json:"cpu_per_login_ns"`
	CPUPerMessage  time.Duration `json:"cpu_per_message_ns"`
}

// serverPhases reads a server's figures at the phase boundaries. A nil one reads nothing.
type serverPhases struct {
	pid        int
	rss0, rss1 int64
	cpu0, cpu1 time.Duration
}

func startServerPhases(pid int) *serverPhases {
	p := &serverPhases{pid: pid}
	p.rss0, _ = benchtool.ProcessRSS(pid)
	p.cpu0, _ = benchtool.ProcessCPU(pid)
	return p
}

// loggedIn reads the figures once every receiver is in.
func (p *serverPhases) loggedIn() {
	if p == nil {
		return
	}
	p.rss1, _ = benchtool.ProcessRSS(p.pid)
	p.cpu1, _ = benchtool.ProcessCPU(p.pid)
}

// done reads the figures at the end and reports them; nil when nothing was read.
func (p *serverPhases) done(receivers int, messages int64) *ServerPhases {
	if p == nil || p.rss1 == 0 {
		return nil
	}
	cpu2, _ := benchtool.ProcessCPU(p.pid)
	ph := &ServerPhases{RSSBefore: p.rss0, RSSIdle: p.rss1, CPULogin: p.cpu1 - p.cpu0, CPUSend: cpu2 - p.cpu1}
	if receivers > 0 {
		ph.RSSPerReceiver = (p.rss1 - p.rss0) / int64(receivers)
		ph.CPUPerLogin = ph.CPULogin / time.Duration(receivers)
	}
	if messages > 0 {
		ph.CPUPerMessage = ph.CPUSend / time.Duration(messages)
	}
	return ph
}
