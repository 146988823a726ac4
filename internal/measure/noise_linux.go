package measure

import (
	"os"
	"strconv"
	"time"

	"github.com/wasmgap/wasmgap/internal/procfs"
)

var procStart = time.Now()

// readCPU returns the machine's busy CPU time (/proc/stat's first line: user, nice,
// system, irq, softirq, steal) and this process tree's (treeUsage), in clock ticks, the
// tree's minor page faults, and the wall time in seconds.
func readCPU() (busy, self, faults uint64, wall float64, ok bool) {
	wall = time.Since(procStart).Seconds()
	c, err := procfs.SystemCPU()
	if err != nil || len(c) < 8 {
		return 0, 0, 0, 0, false
	}
	for _, i := range []int{0, 1, 2, 5, 6, 7} { // user nice system (idle iowait) irq softirq steal
		busy += c[i]
	}
	tree, ok := treeUsage(os.Getpid())
	return busy, tree.cpu, tree.faults, wall, ok
}

// readSteal returns the machine's steal time (/proc/stat's eighth column: what the
// hypervisor gave other guests while this one wanted the CPU), in clock ticks.
func readSteal() (uint64, bool) {
	c, err := procfs.SystemCPU()
	if err != nil || len(c) < 8 {
		return 0, false
	}
	return c[7], true
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
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return procStat{}, false
	}
	return procStatOf(st), true
}

// procStatOf keeps what treeUsage needs of a /proc/<pid>/stat line.
func procStatOf(st procfs.Stat) procStat {
	return procStat{
		ppid:   st.PPID,
		cpu:    st.UTime + st.STime + uint64(max(st.CUTime, 0)) + uint64(max(st.CSTime, 0)),
		faults: st.MinFlt + st.CMinFlt,
	}
}

// readLoad returns the one-minute load average.
func readLoad() (float64, bool) {
	l, err := procfs.ReadLoad()
	return l.One, err == nil
}
