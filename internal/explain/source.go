package explain

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"

	"github.com/wasmgap/wasmgap/kernels"
)

// explainSource lists the kernel's Go source, the one every Go tier compiles: its calls
// of itself and its loops marked.
func explainSource(_ context.Context, r request) ([]Listing, error) {
	fset, file, src, fd, err := kernelFunc(r.k)
	if err != nil {
		return nil, err
	}
	return []Listing{sourceListing(r, fset, file, src, fd)}, nil
}

// kernelFunc finds the kernel's function in the kernels' source: its file (in package
// kernels' folder), the file's text, and its declaration.
func kernelFunc(k *kernels.Kernel) (*token.FileSet, string, []byte, *ast.FuncDecl, error) {
	fset := token.NewFileSet()
	for _, file := range kernels.SourceFiles {
		src, err := kernels.Source.ReadFile(file)
		if err != nil {
			return nil, "", nil, nil, fmt.Errorf("read kernels/%s: %w", file, err)
		}
		f, err := parser.ParseFile(fset, file, src, 0)
		if err != nil {
			return nil, "", nil, nil, fmt.Errorf("parse kernels/%s: %w", file, err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == k.Func && fd.Recv == nil {
				return fset, file, src, fd, nil
			}
		}
	}
	return nil, "", nil, nil, fmt.Errorf("no function %s in the kernels' source", k.Func)
}

func sourceListing(r request, fset *token.FileSet, file string, src []byte, fd *ast.FuncDecl) Listing {
	first := fset.Position(fd.Pos()).Line
	last := fset.Position(fd.End()).Line
	all := strings.Split(string(src), "\n")
	calls, self, loops := map[int]bool{}, map[int]bool{}, map[int]int{} // loop line -> its closing line
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			line := fset.Position(n.Pos()).Line
			calls[line] = true
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == r.k.Func {
				self[line] = true
			}
		case *ast.ForStmt:
			loops[fset.Position(n.Pos()).Line] = fset.Position(n.End()).Line
		case *ast.RangeStmt:
			loops[fset.Position(n.Pos()).Line] = fset.Position(n.End()).Line
		}
		return true
	})
	back := map[int]int{}
	for head, end := range loops {
		back[end] = head
	}
	l := Listing{Tier: "Go source", Kind: KindSource, Function: "kernels." + r.k.Func, From: "kernels/" + file}
	for n := first; n <= last && n-1 < len(all); n++ {
		ln := Line{Offset: n, Text: all[n-1], Call: calls[n], Recursive: self[n], Target: -1}
		if _, ok := loops[n]; ok {
			ln.LoopHead = true
		}
		if head, ok := back[n]; ok {
			ln.BackEdge, ln.Target = true, head
		}
		l.Lines = append(l.Lines, ln)
	}
	l.Bytes = len(strings.Join(all[first-1:last], "\n"))
	summarize(&l)
	return l
}
