package engine

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/wasmgap/wasmgap/kernels"
)

// The groups engines are shown in, in the order the page shows them.
const (
	// GroupGo: the Go kernels on Go's own tiers (native, wazero, yaegi, gccgo).
	GroupGo = "Go tiers"
	// GroupWasm: kernels.wasm on the other WebAssembly engines.
	GroupWasm = "WebAssembly engines"
	// GroupBrowsers: headless Chromium and Firefox on the server, kernels.wasm and the
	// JavaScript kernels in each (the page's own browser is in GroupWasm and GroupOther).
	GroupBrowsers = "Headless browsers"
	// GroupOther: the articles' other languages.
	GroupOther = "Other languages"
)

// Where an engine runs.
const (
	PlaceServer = "server"
	PlacePage   = "page"
)

// Tiers of a runtime, for the JIT on / off view: an interpreter and a JIT of one Runtime
// are a pair.
const (
	TierInterpreter = "interpreter"
	TierJIT         = "jit"
)

// Info is what the reports, the API (GET /api/kernels) and the page say about an engine,
// registered with it (Describe).
type Info struct {
	// Name is the engine's name ("php-jit").
	Name string `json:"name"`
	// Title is the name as a table's header shows it ("PHP JIT").
	Title string `json:"title"`
	// What says in a sentence what runs ("the kernels in PHP 8 with opcache's tracing JIT").
	What string `json:"what,omitempty"`
	// Group is one of GroupGo, GroupWasm, GroupBrowsers, GroupOther: the engine's group in Order, set by
	// Describe (a registration leaves it empty).
	Group string `json:"group"`
	// Rank orders the engines: the engine's place in Order (1 for the first), set by
	// Describe (a registration leaves it zero).
	Rank int `json:"rank"`
	// Place is PlaceServer or PlacePage.
	Place string `json:"place"`
	// Color is the engine's colour in the page's tables and charts ("#8c6bb1"); "" lets the
	// page pick one.
	Color string `json:"color,omitempty"`
	// Install says how to install the runtime the engine needs ("apt-get install php-cli
	// php-opcache"); "" when it is built into this binary.
	Install string `json:"install,omitempty"`
	// Version is the runtime's version, as Infos probes it ("Lua 5.4.4"); "" when unknown or
	// not installed. Reports take the version each run's engine says (engine.Versioner).
	Version string `json:"version,omitempty"`
	// Runtime and Tier place the engine in the JIT on / off view: the engines of one
	// Runtime ("PHP 8"), one with TierInterpreter and one with TierJIT, are a pair.
	Runtime string `json:"runtime,omitempty"`
	Tier    string `json:"tier,omitempty"`
	// KernelsWasm is true for an engine that calls kernels.wasm's exports from a host, one
	// export call per kernel call (wazero, wasmtime, Node's and the browsers' WebAssembly):
	// such an engine also runs the kernels that time that call (kernels.Kernel.HostCall).
	KernelsWasm bool `json:"kernels_wasm,omitempty"`
	// Probe returns the runtime's version; Infos calls it once per process. Nil when Version
	// is set, or when nothing says it before Load.
	Probe func() string `json:"-"`
}

// Runs reports whether the engine i describes runs kernel k: every engine runs the
// articles' kernels; a kernel that times the call into kernels.wasm (kernels.Kernel.HostCall)
// only an engine that makes that call (KernelsWasm).
func (i Info) Runs(k *kernels.Kernel) bool { return !k.HostCall || i.KernelsWasm }

// ErrNotApplicable is the error (wrapped) of Applies for a kernel an engine does not run: a
// report shows such a cell as not applicable, never as a time or a failure.
var ErrNotApplicable = errors.New("not applicable")

// Applies returns nil when the named engine (registered or in the page) runs k, and else an
// error wrapping ErrNotApplicable that says why. An engine it does not know runs every
// kernel it is given (a user's kernel engines, a test's): it says nothing against them.
func Applies(name string, k *kernels.Kernel) error {
	i, ok := Lookup(name)
	if !ok || i.Runs(k) {
		return nil
	}
	return fmt.Errorf("%w: %s times one call from a host into kernels.wasm, and %s does not run kernels.wasm", ErrNotApplicable, k.Name, name)
}

// probes caches the versions Probe returned, by engine name.
var probes sync.Map // name → *probe

type probe struct {
	once sync.Once
	v    string
}

// version returns Version, or what Probe says (once per process).
func (i Info) version() string {
	if i.Version != "" || i.Probe == nil {
		return i.Version
	}
	p, _ := probes.LoadOrStore(i.Name, &probe{})
	pr := p.(*probe)
	pr.once.Do(func() { pr.v = strings.TrimSpace(i.Probe()) })
	return pr.v
}

func (i Info) withDefaults() Info {
	if i.Title == "" {
		i.Title = i.Name
	}
	if i.Place == "" {
		i.Place = PlaceServer
	}
	return i
}

// Page describes the engines that run in the page, not on the server: the page runs them in
// a Web Worker, and no program here builds them, so Names and New do not list them. Their
// Group and Rank, as every engine's, come from Order.
var Page = []Info{
	placed(Info{Name: BrowserWasm, Title: "browser wasm", What: "kernels.wasm compiled by this browser's engine, in a Web Worker", Place: PlacePage, Color: "#54a24b", KernelsWasm: true}),
	placed(Info{Name: BrowserJS, Title: "browser JS", What: "the kernels ported to TypeScript, run by this browser's JIT in a Web Worker", Place: PlacePage, Color: "#eeca3b"}),
}

// PageNames lists the names of the engines that run in the page (Page), in Order.
func PageNames() []string {
	names := make([]string, len(Page))
	for i, p := range Page {
		names[i] = p.Name
	}
	return names
}

// ModuleVersion returns "<name> <version>" for the Go module at path built into this binary
// ("wazero v1.12.0"), or "" when the binary does not say (a test binary).
func ModuleVersion(name, path string) string {
	if v := moduleVersion(path); v != "" {
		return name + " " + v
	}
	return ""
}

func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range info.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}
