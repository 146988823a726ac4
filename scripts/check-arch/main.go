// Command check-arch fails when docs/ARCHITECTURE.md and the module disagree: a package
// that the document's package table does not name, or a name in it that is no package; a
// package of the table that its map (the code block under "## The map") does not name; a
// subcommand of the binary, or an API route of the playground, that its row does not name,
// or one the row names that does not exist (surface.go); and when docs/SECURITY.md's table
// of exposed routes lacks an API route of the playground, or names one that is gone.
//
// A package is a directory of the module holding a .go file, whatever its build tags
// (internal/engine/wasmtime builds only with -tags wasmtime; it is a package all the same), outside
// testdata, node_modules, vendor, hidden directories and nested modules. The document names
// a package in the first column of its table whose header starts with "package": each
// `path` in backquotes there (a trailing slash allowed) is one name. `go tool task lint`
// runs it from the module's root.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

const doc = "docs/ARCHITECTURE.md"

func main() {
	problems, err := check(".", doc)
	if err == nil {
		var more []string
		more, err = checkSurface(".", doc)
		problems = append(problems, more...)
	}
	if err == nil {
		var more []string
		more, err = checkExposed(".", securityDoc)
		problems = append(problems, more...)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "check-arch: %v\n", err)
		os.Exit(2)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "check-arch: %s and %s disagree with the code:\n", doc, securityDoc)
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "  "+p)
		}
		fmt.Fprintf(os.Stderr, "name every package, and nothing else, in the first column of %s's package table, and each of them in its map; every subcommand in the `cmd/wasmgap` row and every /api/ route in the `playground` row, in backquotes; every /api/ route in the `wasmgap serve` rows of %s's table of exposed routes\n", doc, securityDoc)
		os.Exit(1)
	}
}

// check compares the packages under root with the names of the document at root/docName.
func check(root, docName string) ([]string, error) {
	pkgs, err := packages(root)
	if err != nil {
		return nil, err
	}
	text, err := os.ReadFile(filepath.Join(root, docName))
	if err != nil {
		return nil, err
	}
	named, err := names(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", docName, err)
	}
	inMap, err := mapped(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", docName, err)
	}
	var problems []string
	seen := map[string]int{}
	for _, n := range named {
		if line, dup := seen[n.path]; dup {
			problems = append(problems, fmt.Sprintf("%s:%d: `%s` is named twice (first on line %d)", docName, n.line, n.path, line))
			continue
		}
		seen[n.path] = n.line
		if !slices.Contains(pkgs, n.path) {
			problems = append(problems, fmt.Sprintf("%s:%d: `%s` is no package of the module (no directory with a .go file)", docName, n.line, n.path))
		} else if !inMap[n.path] {
			problems = append(problems, fmt.Sprintf("%s:%d: `%s` is in the package table but not in the map (the code block under \"## The map\")", docName, n.line, n.path))
		}
	}
	for _, p := range pkgs {
		if _, ok := seen[p]; !ok {
			problems = append(problems, fmt.Sprintf("package %s is not named in %s", p, docName))
		}
	}
	return problems, nil
}

// packages lists the module's package directories under root, slash-separated and sorted.
func packages(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root {
				if name == "testdata" || name == "node_modules" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if rel == "." {
				rel = "" // the module's root package; named as `.` nowhere: reported below
			}
			if len(out) == 0 || out[len(out)-1] != rel {
				out = append(out, rel)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > 0 && out[0] == "" {
		out[0] = "."
	}
	return out, nil
}

// name is one package named by the document, with its line.
type name struct {
	path string
	line int
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// names reads the package table: the first table whose header's first cell starts with
// "package", and the backquoted paths of each row's first cell.
func names(text []byte) ([]name, error) {
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	var out []name
	state := 0 // 0: before the table, 1: in it, 2: after it
	fence := false
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(t, "```") {
			fence = !fence
			continue
		}
		if fence || state == 2 {
			continue
		}
		cells := strings.Split(strings.Trim(t, "|"), "|")
		switch {
		case state == 0 && strings.HasPrefix(t, "|") && strings.HasPrefix(strings.TrimSpace(cells[0]), "package"):
			state = 1
		case state == 1 && !strings.HasPrefix(t, "|"):
			state = 2
		case state == 1:
			first := strings.TrimSpace(cells[0])
			if strings.Trim(first, "-: ") == "" {
				continue // the separator row
			}
			spans := codeSpan.FindAllStringSubmatch(first, -1)
			if len(spans) == 0 {
				return nil, fmt.Errorf("line %d: the row's first cell %q names no package: give each path in backquotes", line, first)
			}
			for _, m := range spans {
				p := strings.TrimSuffix(strings.TrimSpace(m[1]), "/")
				out = append(out, name{path: p, line: line})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if state == 0 {
		return nil, errors.New(`no package table: a table whose header's first cell is "package", each row naming packages in backquotes in its first cell`)
	}
	return out, nil
}

var (
	// mapGroup is a map's "dir/{a, b}", which stands for dir/a and dir/b.
	mapGroup = regexp.MustCompile(`([\w./-]+/)\{([^}]*)\}`)
	// mapPath is a word of a path's letters in the map.
	mapPath = regexp.MustCompile(`[\w][\w./-]*`)
)

// mapped lists the paths the map names: the words of the first code block after the
// heading "## The map".
func mapped(text []byte) (map[string]bool, error) {
	_, after, ok := strings.Cut(string(text), "\n## The map\n")
	var block string
	if ok {
		_, after, ok = strings.Cut(after, "```")
		block, _, ok = strings.Cut(after, "```")
	}
	if !ok {
		return nil, errors.New(`no map: a code block after the heading "## The map", naming every package of the table`)
	}
	block = mapGroup.ReplaceAllStringFunc(block, func(g string) string {
		m := mapGroup.FindStringSubmatch(g)
		var out []string
		for _, p := range strings.Split(m[2], ",") {
			out = append(out, m[1]+strings.TrimSpace(p))
		}
		return strings.Join(out, " ")
	})
	set := map[string]bool{}
	for _, w := range mapPath.FindAllString(block, -1) {
		set[strings.TrimRight(w, "/.")] = true
	}
	return set, nil
}
