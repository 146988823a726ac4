package playground

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// environment is what stands behind every server number: the machine and the versions
// of the toolchain and engines that produced it.
type environment struct {
	CPU        string            `json:"cpu"`
	Cores      int               `json:"cores"`
	GOMAXPROCS int               `json:"gomaxprocs"`
	OS         string            `json:"os"`
	Arch       string            `json:"arch"`
	Go         string            `json:"go"`
	Modules    map[string]string `json:"modules,omitempty"`
}

// engineModules are the modules whose versions the reports name.
var engineModules = map[string]string{
	"github.com/tetratelabs/wazero": "wazero",
	"github.com/traefik/yaegi":      "yaegi",
}

// currentEnvironment describes this process's machine and build.
func currentEnvironment() environment {
	env := environment{
		CPU:        cpuModel(),
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		Go:         runtime.Version(),
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if name, ok := engineModules[dep.Path]; ok {
				if env.Modules == nil {
					env.Modules = map[string]string{}
				}
				env.Modules[name] = dep.Version
			}
		}
	}
	return env
}

// cpuModel reads the CPU's model name where the OS tells it (Linux), or names the
// architecture.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		key, value, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return runtime.GOARCH
}
