package gccgo

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/driver"
	"github.com/wasmgap/wasmgap/internal/engine/enginetest"
)

// TestEveryKernel builds the driver with gccgo and checks every kernel's value.
func TestEveryKernel(t *testing.T) {
	e := New(Options{CacheDir: t.TempDir()})
	enginetest.Load(t, e)
	if v := e.Version(); !strings.HasPrefix(v, "gccgo") {
		t.Errorf("Version() = %q, want gccgo's", v)
	}
	enginetest.EveryKernel(t, e)
}

func TestNotInstalled(t *testing.T) {
	e := New(Options{CacheDir: t.TempDir(), GCCGo: filepath.Join(t.TempDir(), "gccgo")})
	_, err := e.Load(context.Background())
	if !errors.Is(err, driver.ErrNotInstalled) || !strings.HasSuffix(err.Error(), "not installed: "+Hint) {
		t.Errorf("Load: %v, want ErrNotInstalled naming %q", err, Hint)
	}
}

func TestRegistered(t *testing.T) {
	info, ok := engine.Lookup(Name)
	if !ok || info.Group != engine.GroupGo || info.Install != Hint {
		t.Errorf("Lookup(%s) = %+v, %v", Name, info, ok)
	}
}
