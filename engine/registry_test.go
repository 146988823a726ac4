package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/engine"
	_ "github.com/wasmgap/wasmgap/engine/wazero"
	_ "github.com/wasmgap/wasmgap/engine/yaegi"
	_ "github.com/wasmgap/wasmgap/native"
)

func TestNamesInReportOrder(t *testing.T) {
	want := []string{engine.Native, engine.WazeroCompiler, engine.WazeroInterpreter, engine.Yaegi}
	if got := engine.Names(); !slices.Equal(got, want) {
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
	const want = `unknown engine "v8": valid engines are native, wazero-compiler, wazero-interpreter, yaegi`
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
	engine.Register(engine.Native, 0, nil)
}
