package engine_test

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/wasmgap/wasmgap"

// The module's layers, from the ground up: a package may import only packages of lower
// layers (imports inside the chat's tree are chatserver's own layer test's).
const (
	// ground: packages that import nothing of the module (the kernels, the page's files,
	// internal/'s small tools: childproc, procfs, capped, epoll, httpguard, ndjson, bidi,
	// the gccgo driver's server goserve, the farm's NATS server for tests farmtest).
	ground = iota
	// tools: kernels.wasm and its loader, and internal/'s tools that stand on the ground
	// (sandbox, headless, benchtool, history, the throwaway PostgreSQL server pgtest).
	tools
	// contract: the Engine contract (internal/engine), and the browsers for tests
	// (internal/browsertest, on headless).
	contract
	// harness: what every engine and the measurement stand on (driver, measure).
	harness
	// engines: one package per engine family (internal/engine/*, native), none importing
	// another.
	engines
	// services: what stands on the engines and the method (user kernels, reports), and the
	// load generator and the chat, which the application serves.
	services
	// analysis: what reads the method's results over several runs (the warm-up analysis,
	// on the reports' formats) and the engines' code (explain), under the worker processes
	// that call them.
	analysis
	// application: the worker processes, stored results, the load page.
	application
	// farm: the bench farm, on the worker processes and the stored results, which the
	// playground's server drives as bench does.
	farm
	// server: the playground's HTTP API.
	server
	// top: the binary, the scripts and the build.
	top
)

// layers places each package of the module that the prefixes of layer do not.
var layers = map[string]int{
	"kernels": ground, "web": ground,
	"internal/bidi": ground, "internal/capped": ground, "internal/childproc": ground, "internal/epoll": ground,
	"internal/httpguard": ground, "internal/ndjson": ground, "internal/procfs": ground,
	"internal/engine/driver/goserve": ground, "internal/report/formatcases": ground, "internal/farm/farmtest": ground,

	"wasm": tools, "wasm/module": tools, "internal/sandbox": tools, "internal/headless": tools,
	"internal/benchtool": tools, "internal/history": tools, "internal/gotool": tools, "internal/results/pgtest": tools,

	"internal/engine": contract, "internal/browsertest": contract,

	"internal/engine/driver": harness, "internal/measure": harness,

	"native": engines,

	"internal/custom": services, "internal/report": services, "load": services, "chatserver": services,
	"wasm/kernels": services,

	"internal/runner": application, "internal/results": application, "internal/loadpage": application,
	"internal/explain": analysis, "internal/warmup": analysis,

	"internal/farm": farm,

	"playground": server,

	"build": top,
}

// layer returns the layer of a package of the module, and false for one no rule places.
func layer(pkg string) (int, bool) {
	p := strings.TrimPrefix(pkg, module+"/")
	if l, ok := layers[p]; ok {
		return l, true
	}
	switch {
	case strings.HasPrefix(p, "internal/engine/"):
		return engines, true
	case strings.HasPrefix(p, "chatserver/"):
		return services, true
	case strings.HasPrefix(p, "cmd/"), strings.HasPrefix(p, "scripts/"):
		return top, true
	}
	return 0, false
}

// sameTree reports whether two packages are both of the chat's tree, whose imports among
// themselves chatserver's own layer test judges.
func sameTree(a, b string) bool {
	in := func(p string) bool {
		p = strings.TrimPrefix(p, module+"/")
		return p == "chatserver" || strings.HasPrefix(p, "chatserver/")
	}
	return in(a) && in(b)
}

// TestNoImportRunsBackUp: go list shows every package of the module in a layer, and no
// import from a package to one of its layer or above: the ground imports nothing of the
// module, engine/ imports no engine, no engine imports native/ or another engine, the
// harness no engine, and nothing under the application imports it back.
func TestNoImportRunsBackUp(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range backUp(t, string(out)) {
		t.Error(p)
	}
}

// backUp lists the problems of go list's lines: a package without a layer, or an import
// that runs back up.
func backUp(t *testing.T, list string) []string {
	t.Helper()
	var problems []string
	internal := 0
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		f := strings.Fields(line)
		pkg := f[0]
		level, ok := layer(pkg)
		if !ok {
			problems = append(problems, pkg+" has no layer: place it in internal/engine/layers_test.go")
			continue
		}
		if strings.HasPrefix(pkg, module+"/internal/") {
			internal++
		}
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, module+"/") || sameTree(pkg, imp) {
				continue
			}
			if l, ok := layer(imp); ok && l >= level {
				problems = append(problems, pkg+" imports "+imp+": an import that runs back up (layer "+itoa(level)+" to "+itoa(l)+")")
			}
		}
	}
	if internal < 20 {
		problems = append(problems, "go list showed "+itoa(internal)+" packages under internal/, want them all")
	}
	return problems
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestBackUpFindsWrongImports: the check names an import from the ground to above it, and
// a package no rule places.
func TestBackUpFindsWrongImports(t *testing.T) {
	var list strings.Builder
	// Enough well-placed internal packages that the count passes.
	for range 20 {
		list.WriteString(module + "/internal/procfs\n")
	}
	list.WriteString(module + "/internal/procfs " + module + "/internal/results\n")
	list.WriteString(module + "/internal/newthing\n")
	list.WriteString(module + "/chatserver/internal/page " + module + "/chatserver/internal/fastpath\n")
	got := backUp(t, list.String())
	if len(got) != 2 || !strings.Contains(got[0], "internal/procfs imports "+module+"/internal/results") ||
		!strings.Contains(got[1], "internal/newthing has no layer") {
		t.Errorf("backUp = %q, want the procfs import and newthing's missing layer", got)
	}
}
