package engines

import (
	"strings"
	"testing"
)

func TestNewBuildsEveryNamedEngine(t *testing.T) {
	for _, name := range Names() {
		e, err := New(name)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		if e.Name() != name {
			t.Errorf("New(%q).Name() = %q", name, e.Name())
		}
	}
}

func TestNewUnknownListsValidNames(t *testing.T) {
	_, err := New("v8")
	if err == nil || !strings.Contains(err.Error(), `unknown engine "v8": valid engines are native, wazero-compiler, wazero-interpreter, yaegi`) {
		t.Fatalf("New(v8) error = %v", err)
	}
}
