package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The binary's subcommands and the playground's API routes are checked against the
// document's rows too: the subcommands are the keys of the commands map in
// cmd/wasmgap/main.go, which the `cmd/wasmgap` row names in backquotes; the routes are the
// /api/ patterns the playground's files register (HandleFunc, Handle), which the
// `playground` row names in backquotes, each once, with or without its method.

const (
	commandsFile = "cmd/wasmgap/main.go"
	routesDir    = "playground"
)

// checkSurface compares the subcommands and the API routes with the document's rows.
func checkSurface(root, docName string) ([]string, error) {
	text, err := os.ReadFile(filepath.Join(root, docName))
	if err != nil {
		return nil, err
	}
	cmds, err := subcommands(filepath.Join(root, commandsFile))
	if err != nil {
		return nil, err
	}
	routes, err := apiRoutes(filepath.Join(root, routesDir))
	if err != nil {
		return nil, err
	}
	var problems []string
	docCmds, line := rowSpans(text, "cmd/wasmgap", regexp.MustCompile(`^[a-z][a-z0-9-]*$`), nil)
	problems = append(problems, compare("subcommand", commandsFile, cmds, docCmds, docName, line)...)
	docRoutes, line := rowSpans(text, "playground", regexp.MustCompile(`^(?:[A-Z]+ )?/api/\S*$`), withoutMethod)
	problems = append(problems, compare("API route", routesDir, routes, docRoutes, docName, line)...)
	return problems, nil
}

// withoutMethod returns a route's path: "/api/run" of "POST /api/run".
func withoutMethod(pattern string) string {
	if _, path, ok := strings.Cut(pattern, " "); ok {
		return path
	}
	return pattern
}

// compare names what the code has and the row lacks, and what the row names that the code
// has not.
func compare(what, where string, code, doc []string, docName string, line int) []string {
	var problems []string
	if line == 0 {
		return []string{fmt.Sprintf("%s: no row names the %ss of %s", docName, what, where)}
	}
	for _, c := range code {
		if !slices.Contains(doc, c) {
			problems = append(problems, fmt.Sprintf("%s:%d: the %s `%s` (%s) is not named", docName, line, what, c, where))
		}
	}
	for _, d := range doc {
		if !slices.Contains(code, d) {
			problems = append(problems, fmt.Sprintf("%s:%d: `%s` is no %s of %s", docName, line, d, what, where))
		}
	}
	return problems
}

// rowSpans returns the backquoted spans of the table's row whose first cell is `pkg`, and
// of the rows after it whose first cell is empty (its continuation), that match want
// (each through norm, when set), deduplicated, and the row's line (0 when there is none).
func rowSpans(text []byte, pkg string, want *regexp.Regexp, norm func(string) string) ([]string, int) {
	var out []string
	line := 0
	for i, l := range strings.Split(string(text), "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|")
		first := ""
		if len(cells) >= 2 {
			first = strings.TrimSpace(cells[0])
		}
		switch {
		case len(cells) >= 2 && first == "`"+pkg+"`":
			line = i + 1
		case line > 0 && len(cells) >= 2 && first == "":
		case line > 0:
			return out, line
		default:
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(strings.Join(cells[1:], "|"), -1) {
			s := strings.TrimSpace(m[1])
			if !want.MatchString(s) {
				continue
			}
			if norm != nil {
				s = norm(s)
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out, line
}

// securityDoc holds the table of what each server exposes, whose `wasmgap serve` rows
// name every API route of the playground (checkExposed).
const securityDoc = "docs/SECURITY.md"

// checkExposed compares the playground's API routes with the `wasmgap serve` rows of the
// table of exposed routes in root/docName: a route a visitor can reach and the table does
// not name is one whose exposure nobody wrote down.
func checkExposed(root, docName string) ([]string, error) {
	text, err := os.ReadFile(filepath.Join(root, docName))
	if err != nil {
		return nil, err
	}
	routes, err := apiRoutes(filepath.Join(root, routesDir))
	if err != nil {
		return nil, err
	}
	docRoutes, line := rowSpans(text, "wasmgap serve", regexp.MustCompile(`^(?:[A-Z]+ )?/api/\S*$`), withoutMethod)
	return compare("API route", routesDir, routes, docRoutes, docName, line), nil
}

// subcommands returns the keys of the commands map literal in file.
func subcommands(file string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		return nil, err
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "commands" || len(vs.Values) != 1 {
			return true
		}
		lit, ok := vs.Values[0].(*ast.CompositeLit)
		if !ok {
			return true
		}
		for _, e := range lit.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.BasicLit); ok && k.Kind == token.STRING {
					s, _ := strconv.Unquote(k.Value)
					out = append(out, s)
				}
			}
		}
		return false
	})
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no commands map of string keys", file)
	}
	slices.Sort(out)
	return out, nil
}

// apiRoutes returns the /api/ paths (without their methods) that the non-test Go files of
// dir register with HandleFunc or Handle; the catch-all "/api/" is not a route.
func apiRoutes(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "Handle") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			pattern, _ := strconv.Unquote(lit.Value)
			pattern = withoutMethod(pattern)
			if strings.HasPrefix(pattern, "/api/") && pattern != "/api/" && !slices.Contains(out, pattern) {
				out = append(out, pattern)
			}
			return true
		})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no /api/ route registered", dir)
	}
	slices.Sort(out)
	return out, nil
}
