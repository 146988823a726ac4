package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/web"
)

// fakeWeb writes a minimal web/ under a temporary module root: the three entry points, a
// stylesheet, the index template and an (empty) node_modules for the dependency check.
func fakeWeb(t *testing.T, mainTS string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                   "module example.com/fake\n",
		"web/tsconfig.json":        `{"compilerOptions": {"strict": true}}`,
		"web/src/main.ts":          mainTS,
		"web/src/style.css":        "body { color: red }\n",
		"web/src/worker-js.ts":     "postMessage(1 + 1);\n",
		"web/src/worker-wasm.ts":   "postMessage(2 + 2);\n",
		"web/src/worker-custom.ts": "postMessage(3 + 3);\n",
		"web/src/editor.ts":        "export const editor = 1;\n",
		"web/src/index.html":       `<link href="/{{index .Files "main.css"}}"><script src="/{{index .Files "main.js"}}"></script><script type="application/json">{{.Files}}</script>`,
		"web/dist/placeholder":     "keep\n",
		"web/dist/main-STALE.js":   "old\n",
	}
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "web", "node_modules", "@bjorn3", "browser_wasi_shim"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func readManifest(t *testing.T, root string) web.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "web", "dist", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m web.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBuildWritesHashedFilesManifestAndIndex(t *testing.T) {
	root := fakeWeb(t, "import './style.css';\nconst answer: number = 42;\ndocument.title = String(answer);\n")
	var log bytes.Buffer
	if err := Build(Options{Root: root, SkipWasm: true, SkipTypecheck: true, Log: &log}); err != nil {
		t.Fatalf("Build: %v\n%s", err, log.String())
	}
	m := readManifest(t, root)
	dist := filepath.Join(root, "web", "dist")
	hashed := regexp.MustCompile(`^[a-z-]+-[A-Z0-9]{8}\.(js|css)$`)
	for _, logical := range []string{"main.js", "main.css", "worker-js.js", "worker-wasm.js"} {
		name := m.Files[logical]
		if !hashed.MatchString(name) {
			t.Errorf("%s → %q, want a content-hashed name", logical, name)
			continue
		}
		if _, err := os.Stat(filepath.Join(dist, name)); err != nil {
			t.Errorf("%s: %v", logical, err)
		}
		if strings.HasSuffix(name, ".js") {
			if _, err := os.Stat(filepath.Join(dist, name+".map")); err != nil {
				t.Errorf("no source map for %s: %v", name, err)
			}
		}
	}
	index, err := os.ReadFile(filepath.Join(dist, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`href="/` + m.Files["main.css"] + `"`, `src="/` + m.Files["main.js"] + `"`, `"worker-js.js":"` + m.Files["worker-js.js"] + `"`} {
		if !strings.Contains(string(index), want) {
			t.Errorf("index.html lacks %s:\n%s", want, index)
		}
	}
	if _, err := os.Stat(filepath.Join(dist, "main-STALE.js")); !os.IsNotExist(err) {
		t.Error("a stale file of an earlier build is still in web/dist")
	}
	if _, err := os.Stat(filepath.Join(dist, "placeholder")); err != nil {
		t.Error("the build removed web/dist/placeholder, which keeps the folder in git")
	}
	main, _ := os.ReadFile(filepath.Join(dist, m.Files["main.js"]))
	if strings.Contains(string(main), "answer") {
		t.Errorf("main.js is not minified:\n%s", main)
	}

	// The same sources give the same names: hashes follow the content.
	if err := Build(Options{Root: root, SkipWasm: true, SkipTypecheck: true, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if again := readManifest(t, root); again.Files["main.js"] != m.Files["main.js"] {
		t.Errorf("rebuild renamed main.js: %s then %s", m.Files["main.js"], again.Files["main.js"])
	}
}

func TestBuildPrintsEsbuildDiagnostics(t *testing.T) {
	root := fakeWeb(t, "const broken: number = ;\n")
	var log bytes.Buffer
	err := Build(Options{Root: root, SkipWasm: true, SkipTypecheck: true, Log: &log})
	if err == nil || !strings.Contains(err.Error(), "esbuild: 1 error") {
		t.Fatalf("Build: %v, want esbuild's error count", err)
	}
	for _, want := range []string{"ERROR", "src/main.ts:1:", "const broken: number = ;"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("diagnostics lack %q:\n%s", want, log.String())
		}
	}
}

func TestBuildWithoutNodeModulesSaysWhatToRun(t *testing.T) {
	root := fakeWeb(t, "export {};\n")
	if err := os.RemoveAll(filepath.Join(root, "web", "node_modules")); err != nil {
		t.Fatal(err)
	}
	err := Build(Options{Root: root, SkipWasm: true, SkipTypecheck: true, Log: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "npm ci") {
		t.Fatalf("Build: %v, want advice to run npm ci", err)
	}
}
