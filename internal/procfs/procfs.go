// Package procfs reads the Linux /proc files the project's measurements need: a process's
// /proc/PID/stat line (its state, parent, group, flags, CPU times and page faults), the
// machine's CPU counters on the first line of /proc/stat, and its load average
// (/proc/loadavg). Elsewhere the reads fail.
package procfs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ClockTick is USER_HZ, the unit of the CPU times in both files: 1/100 s on every Linux
// architecture Go runs on.
const ClockTick = time.Second / 100

// Stat is what the project reads of /proc/PID/stat (proc(5)); CPU times are in ClockTick.
type Stat struct {
	State byte // field 3: R running, S sleeping, Z zombie, ... (proc(5))
	PPID  int  // field 4
	PGRP  int  // field 5
	// Flags are the kernel's flags of the task (field 9: PF_* in
	// include/linux/sched.h, PF_EXITING being 0x4).
	Flags uint64
	// MinFlt and CMinFlt are the minor page faults of the process and of its children
	// that ended and were waited for (fields 10 and 11).
	MinFlt, CMinFlt uint64
	// UTime and STime are the process's user and system time, CUTime and CSTime those of
	// its children that ended and were waited for (fields 14 to 17).
	UTime, STime   uint64
	CUTime, CSTime int64
}

// ReadStat reads /proc/<pid>/stat.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	st, err := ParseStat(b)
	if err != nil {
		return Stat{}, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
	}
	return st, nil
}

// ParseStat reads a /proc/PID/stat line. The command name, in parentheses, may hold
// spaces and parentheses: the fields count from its last closing one.
func ParseStat(b []byte) (Stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("no command name in %q", b)
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3, the state
	if len(f) < 15 {
		return Stat{}, fmt.Errorf("%d fields after the command name, want at least 15", len(f))
	}
	var st Stat
	var errs []error
	atoi := func(j int) int {
		v, err := strconv.Atoi(f[j])
		errs = append(errs, err)
		return v
	}
	ulong := func(j int) uint64 {
		v, err := strconv.ParseUint(f[j], 10, 64)
		errs = append(errs, err)
		return v
	}
	long := func(j int) int64 {
		v, err := strconv.ParseInt(f[j], 10, 64)
		errs = append(errs, err)
		return v
	}
	if len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("state %q, want one letter", f[0])
	}
	st.State = f[0][0]
	st.PPID, st.PGRP = atoi(1), atoi(2)
	st.Flags = ulong(6)
	st.MinFlt, st.CMinFlt = ulong(7), ulong(8)
	st.UTime, st.STime = ulong(11), ulong(12)
	st.CUTime, st.CSTime = long(13), long(14)
	for _, err := range errs {
		if err != nil {
			return Stat{}, err
		}
	}
	return st, nil
}

// SystemCPU returns the counters of /proc/stat's first line, in ClockTick, in the kernel's
// order: user, nice, system, idle, iowait, irq, softirq, steal, then any the kernel adds.
func SystemCPU() ([]uint64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return nil, fmt.Errorf("parse /proc/stat: %q", line)
	}
	counts := make([]uint64, len(f)-1)
	for i, v := range f[1:] {
		if counts[i], err = strconv.ParseUint(v, 10, 64); err != nil {
			return nil, fmt.Errorf("parse /proc/stat: %w", err)
		}
	}
	return counts, nil
}
