package chatserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/wasmgap/wasmgap/"

// chatLayers ranks the chat's packages from the top down: a package may
// import a package of the chat only if that one ranks lower (a higher
// number), never one of its own rank or above it. A package under
// chatserver/internal that is not listed ranks with the middle layer:
// below chatserver, above the store.
var chatLayers = map[string]int{
	"chatserver":                   0, // Server, options, routes, transports, its node
	"chatserver/internal/page":     1, // the chat's page and its prebuilt answers
	"chatserver/internal/fastpath": 2, // HTTP/1.1 before net/http, for an App
	"chatserver/internal/cluster":  2, // the log of a chat over NATS JetStream
	"chatserver/internal/auth":     3, // who speaks: tokens, claims
	"chatserver/internal/stream":   3, // one user's open stream: queue, transports, writer
	"chatserver/internal/room":     4, // the rules, a pure state machine
	"chatserver/internal/store":    4, // chat.db and its log
	"chatserver/internal/nbio":     5, // one read or write of a socket, never waiting
}

const middleLayer = 2

// TestNoImportRunsBackUp: no package of the chat imports one above it or
// beside it (its tests included), so each layer can be read, tested and
// replaced alone; in particular nothing under chatserver/internal imports
// chatserver. (A Go import cycle is refused by the compiler already; this
// refuses the imports that would make one possible.)
func TestNoImportRunsBackUp(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", "./...")
	cmd.Dir = "."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./... in chatserver: %v", err)
	}
	type pkg struct {
		ImportPath                         string
		Imports, TestImports, XTestImports []string
	}
	rank := func(path string) (int, bool) {
		rel, ok := strings.CutPrefix(path, module)
		if !ok || rel != "chatserver" && !strings.HasPrefix(rel, "chatserver/") {
			return 0, false // not the chat's
		}
		if r, ok := chatLayers[rel]; ok {
			return r, true
		}
		if strings.HasPrefix(rel, "chatserver/internal/") {
			return middleLayer, true
		}
		return 0, true // a package beside chatserver, above its internals
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		from, ok := rank(p.ImportPath)
		if !ok {
			continue
		}
		seen++
		for kind, imports := range map[string][]string{"imports": p.Imports, "test imports": p.TestImports, "external test imports": p.XTestImports} {
			for _, imp := range imports {
				to, ok := rank(imp)
				if !ok || imp == p.ImportPath {
					continue
				}
				if to <= from {
					t.Errorf("%s %s %s, a package of the same layer or above it (layers: %v): move what it needs down, or behind an interface it declares", p.ImportPath, kind, imp, chatLayers)
				}
			}
		}
	}
	if seen < len(chatLayers)-1 {
		t.Fatalf("go list found %d of the chat's packages: the test did not look", seen)
	}
}

// TestChatserverReadable: chatserver itself (its internal packages and
// tests aside) stays under 3,000 lines, so a newcomer reads it in one
// sitting; a concern that grows it past that moves into a package of its own.
func TestChatserverReadable(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(b, []byte("\n"))
	}
	if lines >= 3000 {
		t.Errorf("chatserver/*.go holds %d lines, want under 3,000: move a concern into chatserver/internal (docs/ARCHITECTURE.md lists them)", lines)
	}
}
