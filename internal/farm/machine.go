package farm

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/headless"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
)

// Machine describes an agent's machine: what makes its timings what they are, and the
// engines it offers.
type Machine struct {
	// Key names the machine as the results store does (results.MachineKey): runs of
	// bench and of an agent on one machine share it.
	Key string `json:"key"`
	// Kind groups machines whose timings compare: same CPU model, cores, memory, OS,
	// architecture and engines. --split shares a plan's cells among machines of one kind only.
	Kind        string `json:"kind"`
	CPU         string `json:"cpu"`
	Cores       int    `json:"cores"`
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	// KernelRelease is the OS kernel's release ("6.12.48-1-amd64"), where known.
	KernelRelease string `json:"kernel_release,omitempty"`
	Go            string `json:"go"`
	// Engines are the engines the agent offers, with the version of those built into the
	// binary (an external runtime's version comes with each of its cells).
	Engines []OfferedEngine `json:"engines"`
}

// OfferedEngine is an engine an agent runs.
type OfferedEngine struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Describe describes this machine, offering engines (checked against the registry).
func Describe(engines []string) (Machine, error) {
	env := report.CurrentEnvironment()
	m := Machine{
		Key: results.MachineKey(env), CPU: env.CPU, Cores: env.Cores, OS: env.OS, Arch: env.Arch, Go: env.Go,
		MemoryBytes: memoryBytes(), KernelRelease: kernelRelease(),
	}
	for _, name := range engines {
		if err := engine.Known(name); err != nil {
			return m, err
		}
		v := ""
		switch {
		case name == engine.Native:
			v = env.Go
		case strings.HasPrefix(name, "wazero"):
			v = "wazero " + env.Module("wazero")
		case name == "yaegi":
			v = "yaegi " + env.Module("yaegi")
		}
		m.Engines = append(m.Engines, OfferedEngine{Name: name, Version: v})
	}
	// Memory in whole GiB: a kernel's few megabytes reserved differ between machines
	// of one model. The engines too: an agent of the kind runs every job of the kind.
	offered := slices.Sorted(slices.Values(m.EngineNames()))
	m.Kind = hashHex(m.CPU, strconv.Itoa(m.Cores), strconv.FormatInt(m.MemoryBytes>>30, 10), m.OS, m.Arch, strings.Join(offered, ","))
	return m, nil
}

// Installed lists the server engines this machine runs, in engine.Order's order, by what
// the registry knows of each (engine.Infos): an engine whose runtime has a probe
// (Info.Probe: gcc, node, java, php, …) when the probe found the runtime; a browser engine
// when its browser is installed (headless.Path); an engine built into this binary
// (neither a probe nor an install hint) always. An engine that needs a program nothing
// probes (binaryen's wasm-opt) is offered only when named.
func Installed() []string {
	return installed(engine.Infos(), browserInstalled)
}

// installed is Installed's rule over infos; hasBrowser says, for a browser engine,
// whether its browser is installed (ok false for an engine that is not a browser's).
func installed(infos []engine.Info, hasBrowser func(name string) (installed, ok bool)) []string {
	var names []string
	for _, info := range infos {
		ok := false
		switch {
		case info.Place != engine.PlaceServer:
		case info.Probe != nil:
			ok = info.Version != ""
		case info.Install == "":
			has, browser := hasBrowser(info.Name)
			ok = has || !browser
		}
		if ok {
			names = append(names, info.Name)
		}
	}
	return names
}

// browserInstalled says whether the named engine is a browser's, and if so whether that
// browser is installed.
func browserInstalled(name string) (installed, ok bool) {
	e, err := engine.New(name)
	if err != nil {
		return false, false
	}
	b, ok := e.(interface{ Browser() headless.Kind })
	if !ok {
		return false, false
	}
	_, err = headless.Path(b.Browser())
	return err == nil, true
}

// Offers reports whether the machine offers the engine.
func (m Machine) Offers(name string) bool {
	for _, e := range m.Engines {
		if e.Name == name {
			return true
		}
	}
	return false
}

// EngineNames lists the engines offered.
func (m Machine) EngineNames() []string {
	names := make([]string, len(m.Engines))
	for i, e := range m.Engines {
		names[i] = e.Name
	}
	return names
}

// Summary is one line for people: "Intel Xeon …, 2 cores, 7.8 GiB, linux 6.12 amd64".
func (m Machine) Summary() string {
	s := fmt.Sprintf("%s, %d cores", m.CPU, m.Cores)
	if m.MemoryBytes > 0 {
		s += fmt.Sprintf(", %.1f GiB", float64(m.MemoryBytes)/(1<<30))
	}
	s += ", " + m.OS
	if m.KernelRelease != "" {
		s += " " + m.KernelRelease
	}
	return s + " " + m.Arch
}

// memoryBytes is the machine's memory from /proc/meminfo, 0 where unknown.
func memoryBytes() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// kernelRelease is the OS kernel's release from /proc, "" where unknown.
func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
