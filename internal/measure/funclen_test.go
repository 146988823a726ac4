package measure

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// maxFuncLines bounds a function of this package, its tests' too: the harness reads as
// named steps (steps.go), each short enough to check by eye.
const maxFuncLines = 60

// TestNoFunctionOverLimit fails on a function (declared, or a literal) longer than
// maxFuncLines in this package's files.
func TestNoFunctionOverLimit(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("the package's files: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, long := range longFuncs(fset, f, maxFuncLines) {
			t.Errorf("%s is over %d lines: split it into named steps", long, maxFuncLines)
		}
	}
}

// longFuncs lists the functions of f longer than limit lines, as "file:line name (n lines)".
func longFuncs(fset *token.FileSet, f *ast.File, limit int) []string {
	var long []string
	ast.Inspect(f, func(n ast.Node) bool {
		name := "a function literal"
		switch fn := n.(type) {
		case *ast.FuncDecl:
			name = fn.Name.Name
		case *ast.FuncLit:
		default:
			return true
		}
		start, end := fset.Position(n.Pos()), fset.Position(n.End())
		if lines := end.Line - start.Line + 1; lines > limit {
			long = append(long, fmt.Sprintf("%s %s (%d lines)", start, name, lines))
		}
		return true
	})
	return long
}

// TestLongFuncsFindsLongOnes: the check finds a function one line over the limit, and not
// one at it.
func TestLongFuncsFindsLongOnes(t *testing.T) {
	for _, tc := range []struct {
		body int
		want int
	}{{maxFuncLines - 2, 0}, {maxFuncLines - 1, 1}} {
		src := "package p\n\nfunc f() {\n"
		for range tc.body {
			src += "\t_ = 0\n"
		}
		src += "}\n"
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "p.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := longFuncs(fset, f, maxFuncLines); len(got) != tc.want {
			t.Errorf("a function of %d lines: %q, want %d found", tc.body+2, got, tc.want)
		}
	}
}
