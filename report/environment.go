package report

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Environment says where and with what a report's numbers were made.
type Environment struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
	// WazeroVersion and YaegiVersion are the module versions built into this binary
	// ("not built in" when the binary does not link them).
	WazeroVersion string    `json:"wazero_version"`
	YaegiVersion  string    `json:"yaegi_version"`
	OS            string    `json:"os"`
	Arch          string    `json:"arch"`
	Time          time.Time `json:"time"`
}

// Module paths whose versions an Environment reports.
const (
	wazeroModule = "github.com/tetratelabs/wazero"
	yaegiModule  = "github.com/traefik/yaegi"
)

// CurrentEnvironment describes this machine and this binary, now.
func CurrentEnvironment() Environment {
	return Environment{
		CPU:           cpuModel("/proc/cpuinfo"),
		Cores:         runtime.NumCPU(),
		GOMAXPROCS:    runtime.GOMAXPROCS(0),
		GoVersion:     runtime.Version(),
		WazeroVersion: moduleVersion(wazeroModule),
		YaegiVersion:  moduleVersion(yaegiModule),
		OS:            runtime.GOOS,
		Arch:          runtime.GOARCH,
		Time:          time.Now().UTC().Truncate(time.Second),
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
