package measure

import (
	"runtime"
	"time"

	"github.com/wasmgap/wasmgap/internal/procfs"
)

// Noise is what the rest of the machine did while a cell's samples ran.
type Noise struct {
	// Load1 is the one-minute load average at the end of the samples.
	Load1 float64 `json:"load1"`
	// OtherCPU is the CPU time other processes took during the samples, in cores busy on
	// average (0.5: half a core the whole time): the machine's busy time (/proc/stat)
	// minus this process tree's: the process and its descendants, such as an engine's
	// driver process, whose CPU time is the measurement itself (/proc/<pid>/stat's
	// utime, stime, and cutime, cstime for children that ended during the samples).
	OtherCPU float64 `json:"other_cpu"`
	// Steal is the CPU time the hypervisor gave other guests during the samples while
	// this machine wanted it (/proc/stat's steal), in cores on average: a virtual
	// machine's share of a busy host, which no process here shows.
	Steal float64 `json:"steal,omitempty"`
	// Cores is the machine's CPU count.
	Cores int `json:"cores"`
	// FaultsPerCall is the minor page faults of this process tree (the worker and an
	// engine's driver process) per call of the kernel, from calibration to the last
	// sample: memory the kernel touched for the first time, or again after the Go
	// runtime handed it back to the operating system. Each costs a trap and a zeroed page;
	// a kernel that allocates megabytes per call can spend a third of its time on them,
	// and how many it takes changes from one process to the next. Zero where unknown.
	FaultsPerCall float64 `json:"faults_per_call,omitempty"`
	// Busy is true when other processes (outside this process tree) took more than
	// BusyCPU cores on average: the cell's times may be slower and more spread than on a
	// quiet machine. The load average is kept for the reader but does not decide: it
	// lags a minute behind and counts this process tree's own threads (a JVM's compiler
	// and collector), so it would flag a quiet cell after a busy minute.
	Busy bool `json:"busy,omitempty"`
}

// clockTicks is USER_HZ per second: /proc's CPU times count in procfs.ClockTick.
const clockTicks = float64(time.Second / procfs.ClockTick)

// BusyCPU is the other processes' CPU use, in cores, past which a cell is flagged busy.
const BusyCPU = 0.5

// noiseMeter takes a reading of the machine when it starts and another when it stops.
type noiseMeter struct {
	ok         bool
	busy, self uint64 // clock ticks: the machine's busy time, this process tree's
	steal      uint64 // clock ticks: the machine's steal time
	faults     uint64 // this process tree's minor page faults
	wall       float64
}

func startNoise() *noiseMeter {
	m := &noiseMeter{}
	m.busy, m.self, m.faults, m.wall, m.ok = readCPU()
	m.steal, _ = readSteal()
	return m
}

// stop returns the noise since start, with the page faults per call over the calls made
// since, or nil where the machine cannot say.
func (m *noiseMeter) stop(calls int) *Noise {
	if !m.ok {
		return nil
	}
	busy, self, faults, wall, ok := readCPU()
	load, lok := readLoad()
	if !ok || !lok {
		return nil
	}
	n := &Noise{Load1: load, Cores: runtime.NumCPU()}
	if elapsed := (wall - m.wall) * clockTicks; elapsed > 0 && busy >= m.busy && self >= m.self {
		other := float64(busy-m.busy) - float64(self-m.self)
		n.OtherCPU = max(other/elapsed, 0)
		if steal, ok := readSteal(); ok && steal >= m.steal {
			n.Steal = float64(steal-m.steal) / elapsed
		}
	}
	n.Busy = n.OtherCPU > BusyCPU
	if calls > 0 && faults >= m.faults {
		n.FaultsPerCall = float64(faults-m.faults) / float64(calls)
	}
	return n
}
