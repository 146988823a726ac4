package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
	_ "github.com/wasmgap/wasmgap/internal/engine/wazero"
	_ "github.com/wasmgap/wasmgap/internal/engine/yaegi"
	_ "github.com/wasmgap/wasmgap/native"
)

func TestNamesInReportOrder(t *testing.T) {
	want := []string{engine.Native, engine.WazeroCompiler, engine.WazeroCompilerOpt, engine.WazeroInterpreter, engine.Yaegi}
	// TestRegisterDescribesWithDefaults adds an engine of its own, ranked last.
	if got := slices.DeleteFunc(engine.Names(), func(n string) bool { return n == testEngine }); !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
}

func TestNewBuildsEveryNamedEngine(t *testing.T) {
	for _, name := range engine.Names() {
		e, err := engine.New(name)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		if e.Name() != name {
			t.Errorf("New(%q).Name() = %q", name, e.Name())
		}
		if err := engine.Known(name); err != nil {
			t.Errorf("Known(%q): %v", name, err)
		}
	}
}

func TestNewUnknownListsValidNames(t *testing.T) {
	const want = `unknown engine "v8": valid engines are native, wazero-compiler, wazero-compiler-opt, wazero-interpreter, yaegi`
	if _, err := engine.New("v8"); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("New(v8) error = %v", err)
	}
	if err := engine.Known("v8"); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Known(v8) error = %v", err)
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a second registration of native did not panic")
		}
	}()
	engine.Describe(engine.Info{Name: engine.Native}, func() engine.Engine { return nil })
}

// testEngine is the engine TestRegisterDescribesWithDefaults registers: the last of
// Order, whose package this test binary does not link.
const testEngine = engine.Python

// TestRegisterDescribesWithDefaults: an engine described by its name alone is described
// by its defaults, in its place in Order.
func TestRegisterDescribesWithDefaults(t *testing.T) {
	engine.Describe(engine.Info{Name: testEngine}, func() engine.Engine { return nil })
	info, ok := engine.Lookup(testEngine)
	last := engine.Order[len(engine.Order)-1]
	rank := 0
	for _, g := range engine.Order {
		rank += len(g.Engines)
	}
	if !ok || info.Title != testEngine || info.Group != last.Group || info.Place != engine.PlaceServer || info.Rank != rank {
		t.Errorf("Lookup(%s) = %+v, %v; want group %s, rank %d", testEngine, info, ok, last.Group, rank)
	}
}

// TestInfos: every registered engine is described, in Names' order, followed by the page's
// engines; the Go tiers carry their version and their JIT on / off pairing.
func TestInfos(t *testing.T) {
	infos := engine.Infos()
	names := engine.Names()
	if len(infos) != len(names)+len(engine.Page) {
		t.Fatalf("Infos() has %d engines, want %d registered and %d in the page", len(infos), len(names), len(engine.Page))
	}
	for i, name := range names {
		if infos[i].Name != name || infos[i].Title == "" || infos[i].Group == "" {
			t.Errorf("Infos()[%d] = %+v, want %s described", i, infos[i], name)
		}
	}
	if got := infos[len(names)].Name; got != "browser-wasm" {
		t.Errorf("the first page engine is %q, want browser-wasm", got)
	}
	wc, _ := engine.Lookup(engine.WazeroCompiler)
	wi, _ := engine.Lookup(engine.WazeroInterpreter)
	if wc.Runtime == "" || wc.Runtime != wi.Runtime || wc.Tier != engine.TierJIT || wi.Tier != engine.TierInterpreter {
		t.Errorf("wazero's tiers are not a pair: %+v, %+v", wc, wi)
	}
	if wc.Version != "" && !strings.HasPrefix(wc.Version, "wazero v") { // "" in a test binary
		t.Errorf("wazero-compiler's version = %q", wc.Version)
	}
	if _, ok := engine.Lookup("v8"); ok {
		t.Error("Lookup(v8) found an engine")
	}
}
