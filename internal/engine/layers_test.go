package engine_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/wasmgap/wasmgap"

// layer is the level of a package of the module among the engines' layers: a package may
// import only packages of lower levels. The leaves (the kernels, the embedded modules and
// page, internal/'s ground packages) are below them all; the harness (measure) stands on the contract, under
// the engines that run it whole themselves (internal/engine/browser); packages outside the engines'
// layers (runner, custom, playground, …) are above them all.
func layer(pkg string) int {
	p := strings.TrimPrefix(pkg, module+"/")
	switch {
	case p == "kernels", p == "wasm", p == "web":
		return 0
	case p == "internal/engine", p == "internal/engine/driver/goserve":
		return 1
	case p == "internal/engine/driver", p == "internal/measure":
		return 2
	case strings.HasPrefix(p, "internal/engine/"), p == "native", strings.HasPrefix(p, "native/"):
		return 3
	case p == "internal/runner", p == "internal/custom", p == "internal/report", p == "internal/history",
		p == "internal/results", p == "internal/loadpage", p == "internal/benchtool", p == "internal/explain":
		return 9 // the application's own packages above the engines
	case strings.HasPrefix(p, "internal/"):
		return 0
	}
	return 9
}

// TestNoImportRunsBackUp: go list shows no import from a package of the engines' layers
// (engine, its driver, the engines under engine/ and native/) to a package of its level or
// above: engine/ imports no engine, no engine imports native/ or another engine, and
// native/ imports nothing of engine/ but the contract and the driver.
func TestNoImportRunsBackUp(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, level := f[0], layer(f[0])
		if level == 0 || level == 9 { // the leaves, and what stands above the engines
			continue
		}
		checked++
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, module+"/") && imp != module {
				continue
			}
			if layer(imp) >= level {
				t.Errorf("%s (layer %d) imports %s (layer %d): an import that runs back up", pkg, level, imp, layer(imp))
			}
		}
	}
	if checked < 8 {
		t.Errorf("go list showed %d packages of the engines' layers, want the engine packages and native's", checked)
	}
}
