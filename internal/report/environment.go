package report

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// Environment says where and with what numbers were made: the machine, the Go toolchain
// and the engines' modules. Every report carries one, and so does every result the
// playground's API streams (the page reads the same JSON).
type Environment struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	// Go is the Go version the binary was built with ("go1.26.8").
	Go string `json:"go"`
	// Modules are the versions of the engines' modules built into the binary, by short
	// name: "wazero" and "yaegi" ("not built in" when the binary does not link one).
	Modules map[string]string `json:"modules,omitempty"`
	// Runtimes are the versions of the runtimes outside this Go binary that ran the
	// report's cells (a peer's gcc, JVM, Node or PHP, wasmtime's library), one per
	// engine in the order the cells ran, as the engines report them
	// (engine.Versioner, measure.Result.Runtime).
	Runtimes []Runtime `json:"runtimes,omitempty"`
	// Time is when the numbers were made; zero (and left out of the JSON) for a server's
	// standing description of itself.
	Time time.Time `json:"time,omitzero"`
}

// Runtime is the runtime behind one engine.
type Runtime struct {
	Engine  string `json:"engine"`
	Version string `json:"version"`
}

// WithRuntimes returns e with the runtimes of results' engines added to Runtimes: one per
// engine, the first version a cell reports (cells without one are skipped).
func (e Environment) WithRuntimes(results []measure.Result) Environment {
	e.Runtimes = slices.Clone(e.Runtimes)
	for _, r := range results {
		if r.Runtime == "" || slices.ContainsFunc(e.Runtimes, func(x Runtime) bool { return x.Engine == r.Engine }) {
			continue
		}
		e.Runtimes = append(e.Runtimes, Runtime{Engine: r.Engine, Version: r.Runtime})
	}
	return e
}

// Module returns the version of the named engine module ("wazero", "yaegi").
func (e Environment) Module(name string) string {
	if v, ok := e.Modules[name]; ok {
		return v
	}
	return "unknown"
}

// engineModules are the module paths whose versions an Environment reports, by short name.
var engineModules = map[string]string{
	"wazero": "github.com/tetratelabs/wazero",
	"yaegi":  "github.com/traefik/yaegi",
}

// CurrentEnvironment describes this machine and this binary, now.
func CurrentEnvironment() Environment {
	mods := make(map[string]string, len(engineModules))
	for name, path := range engineModules {
		mods[name] = moduleVersion(path)
	}
	return Environment{
		CPU:        cpuModel("/proc/cpuinfo"),
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		Go:         runtime.Version(),
		Modules:    mods,
		Time:       time.Now().UTC().Truncate(time.Second),
	}
}

// cpuModel reads the first model name from a cpuinfo file, or says it is unknown.
func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown (" + runtime.GOARCH + ")"
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		key, value, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "model name", "Model", "cpu model", "Processor":
			if v := strings.TrimSpace(value); v != "" {
				return v
			}
		}
	}
	return "unknown (" + runtime.GOARCH + ")"
}

// moduleVersion returns the version of a module built into this binary.
func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build information)"
	}
	for _, m := range info.Deps {
		if m.Path == path {
			if m.Replace != nil {
				return m.Replace.Version + " (replaced)"
			}
			return m.Version
		}
	}
	return "not built in"
}
