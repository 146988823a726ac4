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
// system, irq, softirq, steal) and this process tree's (treeUsage), in clock ticks, the
// tree's minor page faults, and the wall time in seconds.
func readCPU() (busy, self, faults uint64, wall float64, ok bool) {
	wall = time.Since(procStart).Seconds()
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, 0, 0, false
	}
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, 0, 0, false
	}
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system (idle iowait) irq softirq steal
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return 0, 0, 0, 0, false
		}
		busy += v
	}
	tree, ok := treeUsage(os.Getpid())
	return busy, tree.cpu, tree.faults, wall, ok
}

// procStat is what readCPU needs of one /proc/<pid>/stat.
type procStat struct {
	ppid int
	// cpu is utime + stime + cutime + cstime: the process's own CPU time and that of its
	// children that ended and were waited for.
	cpu uint64
	// faults is minflt + cminflt: the process's minor page faults and those of its
	// children that ended and were waited for.
	faults uint64
}

// treeUsage returns the CPU time, in clock ticks, and the minor page faults of the
// process root and all its descendants (ppid is root's): for each process of the tree its
// own (utime, stime, minflt) and those of its children that ended and were waited for
// (cutime, cstime, cminflt). A child that ends during a measurement moves its counts from
// its own line to its parent's, so the tree's totals keep them: an engine's driver process
// (a peer's gcc-built binary, java, node, php), a child of the worker, counts as the worker
// itself. The descendants are found by scanning /proc for parent links; a process that
// ends during the scan is skipped.
func treeUsage(root int) (procStat, bool) {
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return procStat{}, false
	}
	stats := map[int]procStat{}
	children := map[int][]int{}
	for _, e := range dir {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := readProcStat(pid)
		if !ok {
			if pid == root {
				return procStat{}, false
			}
			continue
		}
		stats[pid] = st
		children[st.ppid] = append(children[st.ppid], pid)
	}
	if _, ok := stats[root]; !ok {
		return procStat{}, false
	}
	total := procStat{ppid: stats[root].ppid}
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		total.cpu += stats[pid].cpu
		total.faults += stats[pid].faults
		for _, c := range children[pid] {
			if !seen[c] {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	return total, true
}

// readProcStat reads /proc/<pid>/stat.
func readProcStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseProcStat(b)
}

// parseProcStat reads the parent and the CPU times from a /proc/<pid>/stat line.
func parseProcStat(b []byte) (procStat, bool) {
	// The command name, in parentheses, may hold spaces and parentheses: fields count
	// from its last closing one.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	g := strings.Fields(string(b[i+1:]))
	if len(g) < 15 {
		return procStat{}, false
	}
	ppid, err := strconv.Atoi(g[1]) // field 4 of proc(5)
	if err != nil {
		return procStat{}, false
	}
	st := procStat{ppid: ppid}
	for _, j := range []int{11, 12, 13, 14} { // utime stime cutime cstime (fields 14–17)
		v, err := strconv.ParseInt(g[j], 10, 64)
		if err != nil {
			return procStat{}, false
		}
		st.cpu += uint64(max(v, 0))
	}
	for _, j := range []int{7, 8} { // minflt cminflt (fields 10–11)
		v, err := strconv.ParseUint(g[j], 10, 64)
		if err != nil {
			return procStat{}, false
		}
		st.faults += v
	}
	return st, true
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
