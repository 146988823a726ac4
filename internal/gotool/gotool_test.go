package gotool

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var tool = Tool{Name: "peer", Package: "example.com/peer", Version: "v1.2.3", About: "seconds"}

// fakeBuild writes a binary named name into bin and counts its calls.
func fakeBuild(name string, calls *int) builder {
	return func(_ context.Context, pkg, version, bin string) error {
		*calls++
		if pkg != tool.Package || version != tool.Version {
			return errors.New("asked to build " + pkg + "@" + version)
		}
		return os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/true\n"), 0o755)
	}
}

func TestEnsureBuildsOnce(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	var log strings.Builder
	p, err := tool.ensure(context.Background(), dir, &log, fakeBuild("peer", &calls))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "peer@v1.2.3", "peer"); p != want {
		t.Errorf("path %s, want %s", p, want)
	}
	if !strings.Contains(log.String(), "building peer v1.2.3") {
		t.Errorf("no line before the build: %q", log.String())
	}
	if _, err := tool.ensure(context.Background(), dir, io.Discard, fakeBuild("peer", &calls)); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("built %d times, want once", calls)
	}
	assertOnly(t, dir, "peer@v1.2.3")
}

func TestEnsureFailureLeavesNothing(t *testing.T) {
	for name, build := range map[string]builder{
		"build fails": func(context.Context, string, string, string) error { return errors.New("no network") },
		"no binary":   fakeBuild("other-name", new(int)),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := tool.ensure(context.Background(), dir, io.Discard, build)
			if err == nil || !strings.Contains(err.Error(), "build peer v1.2.3") {
				t.Fatalf("err %v, want one naming the tool and version", err)
			}
			assertOnly(t, dir)
		})
	}
}

func TestCacheDirFromEnvironment(t *testing.T) {
	t.Setenv("WASMGAP_TOOLS", "/some/where")
	if d, err := CacheDir(); err != nil || d != "/some/where" {
		t.Errorf("CacheDir() = %q, %v", d, err)
	}
}

// assertOnly checks that dir holds exactly the entries names: no build folder left behind.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}
