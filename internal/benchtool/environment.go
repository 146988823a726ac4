package benchtool

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/internal/procfs"
)

// Program is one program whose version a benchmark's table names: Name as the table says
// it, the command that prints the version, and Missing, when set, said instead (the
// program is not installed, and how to install it).
type Program struct {
	Name    string
	Path    string
	Args    []string
	Missing string
	// GoBuildInfo says the program is a Go binary whose version is read from its build
	// information (a `go install`ed module's version), not from what it prints.
	GoBuildInfo bool
}

// Environment describes the machine and the programs' versions for a table's header: the
// date, the CPU with its cores and the load average at the start, then "name: version" for
// each program (the first line of what it prints, a known prefix trimmed).
func Environment(ctx context.Context, programs []Program) []string {
	lines := []string{"date: " + time.Now().UTC().Format("2006-01-02 15:04 MST")}
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	load := ""
	if l, err := procfs.ReadLoad(); err == nil {
		load = fmt.Sprintf(", load average %.2f %.2f %.2f at the start", l.One, l.Five, l.Fifteen)
	}
	lines = append(lines, fmt.Sprintf("machine: %s, %d cores%s", cpu, runtime.NumCPU(), load))
	for _, p := range programs {
		if p.Missing != "" {
			lines = append(lines, p.Name+": "+p.Missing)
			continue
		}
		if p.GoBuildInfo {
			v := "unknown version"
			if bi, err := buildinfo.ReadFile(p.Path); err == nil {
				v = bi.Main.Path + " " + bi.Main.Version + ", " + bi.GoVersion
			}
			lines = append(lines, p.Name+": "+v)
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		out, _ := childproc.CombinedOutput(childproc.Command(ctx, p.Path, p.Args...))
		cancel()
		v := FirstLine(string(bytes.TrimSpace(out)))
		v = strings.TrimPrefix(v, "nginx version: ")
		v = strings.TrimPrefix(v, "This is ApacheBench, ")
		v, _, _ = strings.Cut(v, " Copyright") // wrk's line
		lines = append(lines, p.Name+": "+v)
	}
	return lines
}
