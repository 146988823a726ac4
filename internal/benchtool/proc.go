package benchtool

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/wasmgap/wasmgap/internal/procfs"
)

// ClockTick is the unit of CPUTime: USER_HZ, the unit of utime and stime in
// /proc/PID/stat, 1/100 s on every Linux architecture Go runs on.
const ClockTick = procfs.ClockTick

// GroupPIDs lists the processes of process group pgid (a server and, for nginx, its workers).
func GroupPIDs(pgid int) []int {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if st, err := procfs.ParseStat(b); err == nil && st.PGRP == pgid {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// ProcessCPU is the user + system time process pid has used so far
// (/proc/PID/stat), in steps of ClockTick.
func ProcessCPU(pid int) (time.Duration, error) {
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return 0, err
	}
	return time.Duration(st.UTime+st.STime) * ClockTick, nil
}

// ProcessRSS is process pid's resident memory in bytes (VmRSS of /proc/PID/status).
func ProcessRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	i := bytes.Index(b, []byte("\nVmRSS:"))
	if i < 0 {
		return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	line := b[i+len("\nVmRSS:"):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	f := bytes.Fields(line) // "12345", "kB"
	if len(f) == 0 {
		return 0, fmt.Errorf("parse VmRSS %q of /proc/%d/status", line, pid)
	}
	kb, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse VmRSS %q of /proc/%d/status: %w", line, pid, err)
	}
	return kb << 10, nil
}

// CPUTime is the user + system time the processes have used so far (the processes that
// exited are not counted: a server's processes live for the whole run).
func CPUTime(pids ...int) time.Duration {
	var total time.Duration
	for _, pid := range pids {
		cpu, _ := ProcessCPU(pid)
		total += cpu
	}
	return total
}

// RSS is the sum of the processes' resident memory in bytes (the processes that exited
// count for nothing).
func RSS(pids ...int) int64 {
	var total int64
	for _, pid := range pids {
		rss, _ := ProcessRSS(pid)
		total += rss
	}
	return total
}

// RSSSampler records the peak of RSS(pids...), sampled every 20 ms until Stop.
type RSSSampler struct {
	pids  []int
	stopc chan struct{}
	wg    sync.WaitGroup
	peak  int64
}

// SampleRSS starts sampling the processes' resident memory.
func SampleRSS(pids ...int) *RSSSampler {
	s := &RSSSampler{pids: pids, stopc: make(chan struct{}), peak: RSS(pids...)}
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
				s.peak = max(s.peak, RSS(s.pids...))
			}
		}
	}()
	return s
}

// Stop ends the sampling and returns the peak, one last sample included.
func (s *RSSSampler) Stop() int64 {
	close(s.stopc)
	s.wg.Wait()
	return max(s.peak, RSS(s.pids...))
}
