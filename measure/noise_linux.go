package measure

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux architecture
// Go supports.
const clockTicks = 100

var procStart = time.Now()

// readCPU returns the machine's busy CPU time (/proc/stat's first line: user, nice,
// system, irq, softirq, steal) and this process's (/proc/self/stat: utime, stime), in
// clock ticks, and the wall time in seconds.
func readCPU() (busy, self uint64, wall float64, ok bool) {
	wall = time.Since(procStart).Seconds()
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, 0, false
	}
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system (idle iowait) irq softirq steal
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return 0, 0, 0, false
		}
		busy += v
	}
	me, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	// The command name, in parentheses, may hold spaces: fields count from its end.
	i := bytes.LastIndexByte(me, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	g := strings.Fields(string(me[i+1:]))
	if len(g) < 13 {
		return 0, 0, 0, false
	}
	for _, j := range []int{11, 12} { // utime, stime (fields 14 and 15 of proc(5))
		v, err := strconv.ParseUint(g[j], 10, 64)
		if err != nil {
			return 0, 0, 0, false
		}
		self += v
	}
	return busy, self, wall, true
}

// readLoad returns the one-minute load average.
func readLoad() (float64, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}
