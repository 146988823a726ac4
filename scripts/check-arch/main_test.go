package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const table = "# A\n\n| package | what |\n| --- | --- |\n| `a/` | one |\n| `b`, `b/c` | two |\n\nafter\n\n## The map\n\n```\na ─▶ b/{c, d}\nb ◀── a\n```\n"

func tree(t *testing.T, doc string, extra map[string]string) string {
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                  "module m\n",
		"docs/ARCHITECTURE.md":    doc,
		"a/a.go":                  "package a\n",
		"b/b.go":                  "package b\n",
		"b/c/c_wasmtime.go":       "//go:build wasmtime\n\npackage c\n",
		"b/testdata/x/x.go":       "package x\n",
		"web/node_modules/y/y.go": "package y\n",
		"nested/go.mod":           "module n\n",
		"nested/n.go":             "package n\n",
		"notes/readme.txt":        "no Go here\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	write(t, root, files)
	return root
}

func TestCheckAgrees(t *testing.T) {
	problems, err := check(tree(t, table, nil), "docs/ARCHITECTURE.md")
	if err != nil || len(problems) != 0 {
		t.Fatalf("problems %q, err %v", problems, err)
	}
}

func TestCheckFindsBothKindsOfDisagreement(t *testing.T) {
	doc := strings.Replace(table, "| `a/` | one |", "| `a/`, `gone` | one |", 1)
	problems, err := check(tree(t, doc, map[string]string{"d/d.go": "package d\n"}), "docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(problems, "\n")
	for _, want := range []string{"docs/ARCHITECTURE.md:5: `gone` is no package", "package d is not named in docs/ARCHITECTURE.md"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems:\n%s\nwant one with %q", got, want)
		}
	}
	if len(problems) != 2 {
		t.Errorf("%d problems, want 2: %q", len(problems), problems)
	}
}

// A package of the table that the map leaves out is a problem; a map's dir/{x, y} names
// dir/x and dir/y.
func TestCheckFindsAPackageMissingFromTheMap(t *testing.T) {
	problems, err := check(tree(t, strings.Replace(table, "b/{c, d}", "b/{d}", 1), nil), "docs/ARCHITECTURE.md")
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0], "`b/c` is in the package table but not in the map") {
		t.Errorf("b/c left out of the map: %q, %v", problems, err)
	}
	if _, err := check(tree(t, strings.Replace(table, "## The map", "## Map", 1), nil), "docs/ARCHITECTURE.md"); err == nil || !strings.Contains(err.Error(), "no map") {
		t.Errorf("a document without its map: %v, want an error saying so", err)
	}
}

func TestCheckRefusesADocumentWithoutItsTable(t *testing.T) {
	for doc, want := range map[string]string{
		"# A\n\n| folder | what |\n| --- | --- |\n| `a` | x |\n": "no package table",
		"| package | what |\n| --- | --- |\n| a | x |\n":         "names no package",
	} {
		if _, err := check(tree(t, doc, nil), "docs/ARCHITECTURE.md"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v, want one with %q", err, want)
		}
	}
	problems, err := check(tree(t, strings.Replace(table, "| `b`, `b/c` | two |", "| `b`, `b/c` | two |\n| `a` | again |", 1), nil), "docs/ARCHITECTURE.md")
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0], "named twice") {
		t.Errorf("a package named twice: %q, %v", problems, err)
	}
}
