package childproc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryChildThroughChildproc: no program file of the module that imports os/exec
// starts a command itself (Start, Run, Output, CombinedOutput on it): each goes through
// Start or CombinedOutput here, so that none misses its process group and the
// parent-death signal. The developer's commands (scripts/, build/) run from a terminal,
// not from the server, and are left out.
func TestEveryChildThroughChildproc(t *testing.T) {
	root := filepath.Join("..", "..")
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch {
			case rel == "scripts", rel == "build", rel == filepath.Join("internal", "childproc"),
				rel == "node_modules", rel == "testdata", strings.HasPrefix(d.Name(), ".") && rel != ".":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		starts, err := directStarts(path)
		found = append(found, starts...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s starts a command itself: use childproc.Start or childproc.CombinedOutput", f)
	}
}

// directStarts lists the calls of a file importing os/exec that start a command without
// this package: a method Start, Run, Output or CombinedOutput called with no argument.
func directStarts(path string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return nil, err
	}
	imports := false
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "os/exec" {
			imports = true
		}
	}
	if !imports {
		return nil, nil
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 0 {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
			switch sel.Sel.Name {
			case "Start", "Run", "Output", "CombinedOutput":
				found = append(found, fset.Position(call.Pos()).String())
			}
		}
		return true
	})
	return found, nil
}

// TestDirectStartsFindsOne: the check sees a command started by exec.Cmd's own method.
func TestDirectStartsFindsOne(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.go")
	src := "package p\n\nimport \"os/exec\"\n\nfunc f() { exec.Command(\"true\").Run() }\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := directStarts(path); err != nil || len(got) != 1 {
		t.Errorf("directStarts = %q, %v; want the Run call", got, err)
	}
}
