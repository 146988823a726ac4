// Package custom turns a user's Go function into a kernel that the sandboxed engines run:
// Check refuses what is not allowed (imports outside Allowed, directives, cgo, any shape
// but one exported function of integer parameters returning int64), Builder compiles what
// passes to a WASI module in a locked-down go build (a fresh module, a clean environment,
// no network, a time limit and rlimits, one build per CPU, results cached by the source's
// hash), and Engine runs it on wazero's compiler and interpreter or on yaegi with a symbol
// table restricted to Allowed.
//
// Why these limits: the source runs inside the server's machine. WebAssembly (wazero, the
// browser) has no access to anything but its memory and the few WASI calls the module
// imports, and yaegi sees only the symbols it is given; the allow-list keeps to packages
// that compute (no files, network, processes, time, reflection or unsafe memory), which
// is also what keeps the tiers comparable.
package custom

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/scanner"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// MaxSource bounds the size of a source, in bytes.
const MaxSource = 64 << 10

// PackageName is the package clause every source must have.
const PackageName = "kernel"

// Allowed lists the standard-library packages a source may import: packages that only
// compute, and that yaegi's symbol table and GOOS=wasip1 both offer. Everything else is
// refused, notably unsafe, os, os/exec, net, syscall, plugin, runtime, reflect, io/fs,
// time and C (cgo): they reach the machine, the runtime's internals or the clock; and
// sync, sync/atomic, iter and os/signal: they only matter to concurrent code, which a
// kernel may not be (see Check). No package here starts a goroutine.
//
// The generic packages slices, maps and cmp are left out: yaegi (v0.16) interprets them
// from their source and fails on parts of it ("undefined type for E"), so a kernel using
// them would not run on every tier.
var Allowed = []string{
	"bytes", "container/heap", "container/list", "container/ring", "errors", "fmt",
	"hash/crc32", "hash/fnv", "math", "math/big", "math/bits", "math/rand/v2",
	"sort", "strconv", "strings", "unicode", "unicode/utf16", "unicode/utf8",
}

// paramTypes are the types a kernel's parameters may have.
var paramTypes = []string{"int", "int32", "int64"}

// Error is a refusal of Check, or a compiler error of Builder: what was wrong, and where.
type Error struct {
	// Line and Column locate the fault in the source (1-based); 0 when it has no place.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Msg says what was wrong and what is allowed.
	Msg string `json:"error"`
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Msg)
	}
	return e.Msg
}

// Errors is every fault found in one source, in the order of the source.
type Errors []*Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Func is the kernel function a source declares.
type Func struct {
	// Name is the function's name.
	Name string `json:"name"`
	// Params are its parameters' names, in order.
	Params []string `json:"params"`
	// Types are their types: "int", "int32" or "int64".
	Types []string `json:"types"`
}

// Check parses src and reports whether it is an allowed kernel: one file of package
// kernel, of at most MaxSource bytes, importing only Allowed packages, with no //go: or
// //line directive and no build constraint, sequential (no go statement, no channel),
// declaring exactly one exported function whose
// parameters are int, int32 or int64 and whose one result is int64. The error is Errors,
// each naming its line and column and what is allowed.
func Check(src []byte) (*Func, error) {
	if len(src) > MaxSource {
		return nil, Errors{{Msg: fmt.Sprintf("the source is %d bytes: at most %d (%d KiB) are allowed", len(src), MaxSource, MaxSource>>10)}}
	}
	if bytes.IndexByte(src, 0) >= 0 {
		return nil, Errors{{Msg: "the source contains a NUL byte: it must be Go text"}}
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "kernel.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		var list Errors
		var sl scanner.ErrorList
		if errors.As(err, &sl) {
			for _, e := range sl {
				list = append(list, &Error{Line: e.Pos.Line, Column: e.Pos.Column, Msg: "syntax error: " + e.Msg})
			}
		}
		if len(list) == 0 {
			list = Errors{{Msg: err.Error()}}
		}
		if len(list) > 10 {
			list = list[:10]
		}
		// A go.mod or a toolchain line pasted as the source fails here, at its first line.
		return nil, list
	}
	var errs Errors
	at := func(p token.Pos, format string, args ...any) {
		pos := fset.Position(p)
		errs = append(errs, &Error{Line: pos.Line, Column: pos.Column, Msg: fmt.Sprintf(format, args...)})
	}
	if f.Name.Name != PackageName {
		at(f.Name.Pos(), "the package is %s: it must be package %s", f.Name.Name, PackageName)
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			text := c.Text
			switch {
			case strings.HasPrefix(text, "//go:"):
				name, _, _ := strings.Cut(strings.TrimPrefix(text, "//"), " ")
				at(c.Pos(), "directive //%s is not allowed: no //go: directives (generate, linkname, embed, build, wasmexport, …) may appear in a kernel", name)
			case strings.HasPrefix(text, "//line ") || strings.HasPrefix(text, "/*line "):
				at(c.Pos(), "//line directives are not allowed: they would hide where errors are")
			case constraint.IsPlusBuild(text):
				// As the go command reads them: "//+build", "//\t+build" and "// +build".
				at(c.Pos(), "build constraints (// +build lines) are not allowed: the kernel is always built, for every tier")
			case strings.HasPrefix(text, "//export ") || strings.HasPrefix(text, "//extern "):
				at(c.Pos(), "cgo directives are not allowed")
			}
		}
	}
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			at(imp.Path.Pos(), "bad import path %s", imp.Path.Value)
			continue
		}
		switch {
		case path == "C":
			at(imp.Path.Pos(), `import "C" is not allowed: cgo is off; the allowed imports are %s`, strings.Join(Allowed, ", "))
		case !slices.Contains(Allowed, path):
			at(imp.Path.Pos(), "import %q is not allowed: the allowed imports are %s (packages that only compute)", path, strings.Join(Allowed, ", "))
		}
		if imp.Name != nil && (imp.Name.Name == "." || imp.Name.Name == "_") {
			at(imp.Name.Pos(), "import %s %q: dot and blank imports are not allowed", imp.Name.Name, path)
		}
	}
	checkSequential(f, at)
	var found *Func
	var exported []*ast.FuncDecl
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || !fd.Name.IsExported() {
			continue
		}
		exported = append(exported, fd)
	}
	const shape = "func Name(a int, b int64, …) int64: integer parameters (int, int32, int64), one int64 result"
	switch len(exported) {
	case 0:
		at(f.Name.Pos(), "no exported function: declare exactly one, as %s", shape)
	case 1:
		found = checkFunc(exported[0], at, shape)
	default:
		names := make([]string, len(exported))
		for i, fd := range exported {
			names[i] = fd.Name.Name
		}
		at(exported[1].Name.Pos(), "%d exported functions (%s): declare exactly one (%s); name the others in lower case", len(exported), strings.Join(names, ", "), shape)
	}
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b *Error) int {
			if a.Line != b.Line {
				return a.Line - b.Line
			}
			return a.Column - b.Column
		})
		return nil, errs
	}
	return found, nil
}

// sequential says why a kernel may not be concurrent, for every refusal of checkSequential.
const sequential = "a kernel runs on one goroutine: a second one would let it race itself, and in the interpreted tier (yaegi, on real threads) a data race on an interface, a slice or a string breaks memory safety"

// checkSequential refuses what makes a kernel concurrent: go statements, and channels
// (their types, sends, receives and select), which without goroutines can only block.
// The allow-list keeps out every other way to a second thread or to the scheduler (sync,
// sync/atomic, runtime, time.AfterFunc, os/signal, iter.Pull, net/http's servers, and
// unsafe and reflect, which break memory safety without a race): none of Allowed starts a
// goroutine or calls back from one.
func checkSequential(f *ast.File, at func(token.Pos, string, ...any)) {
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			at(n.Pos(), "go statements are not allowed: %s", sequential)
		case *ast.ChanType:
			at(n.Pos(), "channel types are not allowed: %s; without goroutines a channel can only block", sequential)
		case *ast.SendStmt:
			at(n.Arrow, "channel sends are not allowed: %s", sequential)
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				at(n.OpPos, "channel receives are not allowed: %s", sequential)
			}
		case *ast.SelectStmt:
			at(n.Pos(), "select statements are not allowed: %s", sequential)
		}
		return true
	})
}

// checkFunc checks the exported function's signature.
func checkFunc(fd *ast.FuncDecl, at func(token.Pos, string, ...any), shape string) *Func {
	fn := &Func{Name: fd.Name.Name}
	ok := true
	if fd.Type.TypeParams != nil && len(fd.Type.TypeParams.List) > 0 {
		at(fd.Type.TypeParams.Pos(), "%s is generic: the kernel must be %s", fd.Name.Name, shape)
		ok = false
	}
	if fd.Body == nil {
		at(fd.Name.Pos(), "%s has no body", fd.Name.Name)
		ok = false
	}
	for _, field := range fd.Type.Params.List {
		id, isIdent := field.Type.(*ast.Ident)
		if !isIdent || !slices.Contains(paramTypes, id.Name) {
			at(field.Type.Pos(), "parameter type %s is not allowed: the kernel must be %s", exprString(field.Type), shape)
			ok = false
			continue
		}
		if len(field.Names) == 0 {
			at(field.Type.Pos(), "parameters must be named: the page and the API set them by name")
			ok = false
			continue
		}
		for _, n := range field.Names {
			if n.Name == "_" || slices.Contains(fn.Params, n.Name) {
				at(n.Pos(), "parameter %s: every parameter needs its own name", n.Name)
				ok = false
			}
			fn.Params = append(fn.Params, n.Name)
			fn.Types = append(fn.Types, id.Name)
		}
	}
	if len(fn.Params) > 8 {
		at(fd.Type.Params.Pos(), "%d parameters: at most 8 are allowed", len(fn.Params))
		ok = false
	}
	res := fd.Type.Results
	if res == nil || len(res.List) != 1 || len(res.List[0].Names) > 1 {
		at(fd.Name.Pos(), "%s must return one int64: the kernel must be %s", fd.Name.Name, shape)
		ok = false
	} else if id, isIdent := res.List[0].Type.(*ast.Ident); !isIdent || id.Name != "int64" {
		at(res.List[0].Type.Pos(), "%s returns %s: the kernel must return int64 (%s)", fd.Name.Name, exprString(res.List[0].Type), shape)
		ok = false
	}
	if !ok {
		return nil
	}
	return fn
}

func exprString(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return exprString(t.X) + "." + t.Sel.Name
	case *ast.StarExpr:
		return "*" + exprString(t.X)
	case *ast.ArrayType:
		return "[…]" + exprString(t.Elt)
	case *ast.Ellipsis:
		return "..." + exprString(t.Elt)
	}
	return fmt.Sprintf("%T", e)
}
