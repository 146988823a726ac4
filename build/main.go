// Command build builds the playground page: it compiles kernels.wasm (the kernels for
// GOOS=wasip1 as a WASI reactor), bundles web/src with esbuild's Go API into web/dist with
// content-hashed, minified files and source maps, and writes web/dist/manifest.json (which
// hashed file holds each logical part) and web/dist/index.html for the server to embed.
//
// Run it from anywhere in the module: go run ./build. It needs web/node_modules
// (npm ci in web/), for the WASI shim and the TypeScript checker.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/wasmgap/wasmgap/wasm"
	"github.com/wasmgap/wasmgap/web"
)

// Options say what to build. The zero value builds everything from the module root found
// above the working directory.
type Options struct {
	// Root is the module's root folder; "" means the one above the working directory.
	Root string
	// SkipWasm leaves kernels.wasm out (the page then offers no browser-wasm engine).
	SkipWasm bool
	// WasmOnly builds kernels.wasm (wasm/kernels.wasm, committed) and nothing else (no
	// node_modules needed): what `go tool task wasm` runs.
	WasmOnly bool
	// CheckWasm builds kernels.wasm into a temporary file, writes nothing and fails when
	// the bytes differ from the committed wasm/kernels.wasm (wasm.CheckBuilt): what CI runs
	// before the tests.
	CheckWasm bool
	// SkipTypecheck leaves out the TypeScript type check (tsc --noEmit).
	SkipTypecheck bool
	// PackageDir, when not "", builds kernels.wasm and writes the npm package
	// @wasmgap/kernels there (WritePackage) and nothing else: what `go tool task package` runs.
	PackageDir string
	// PackageVersion is the version written into the package's package.json.
	PackageVersion string
	// Log receives progress lines and diagnostics; nil means os.Stderr.
	Log io.Writer
}

// entryPoints are the bundle's entry points: the page, its workers (the catalogue's two and
// the user kernels' one) and the Go editor, which the page loads only on its "Your kernel" tab.
var entryPoints = []string{"main.ts", "worker-wasm.ts", "worker-js.ts", "worker-custom.ts", "editor.ts"}

func main() {
	var opts Options
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	fs.StringVar(&opts.Root, "root", "", "module root (default: found above the working directory)")
	fs.BoolVar(&opts.SkipWasm, "skip-wasm", false, "do not build kernels.wasm")
	fs.BoolVar(&opts.WasmOnly, "wasm-only", false, "build kernels.wasm into "+wasm.ModulePath+" and nothing else")
	fs.BoolVar(&opts.CheckWasm, "check-wasm", false, "build kernels.wasm into a temporary file and fail when it differs from the committed "+wasm.ModulePath)
	fs.StringVar(&opts.PackageDir, "package", "", "build kernels.wasm and write the npm package @wasmgap/kernels into this folder (e.g. "+DefaultPackageDir+") and nothing else")
	fs.StringVar(&opts.PackageVersion, "package-version", versionPlaceholder, "the version of the package written by -package")
	fs.BoolVar(&opts.SkipTypecheck, "skip-typecheck", false, "do not type-check web/src with tsc")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if err := Build(opts); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n", err)
		os.Exit(1)
	}
}

// Build builds kernels.wasm and the page bundle as Options say.
func Build(opts Options) error {
	log := opts.Log
	if log == nil {
		log = os.Stderr
	}
	root := opts.Root
	if root == "" {
		var err error
		if root, err = moduleRoot(); err != nil {
			return err
		}
	}
	if opts.PackageDir != "" {
		start := time.Now()
		dir := opts.PackageDir
		if !filepath.IsAbs(dir) {
			// Relative to the working directory, as a flag is read.
			if abs, err := filepath.Abs(dir); err == nil {
				dir = abs
			}
		}
		if err := WritePackage(root, dir, opts.PackageVersion); err != nil {
			return err
		}
		fmt.Fprintf(log, "build: package @wasmgap/kernels in %s in %v\n", rel(root, dir), time.Since(start).Round(time.Millisecond))
		return nil
	}
	if opts.CheckWasm {
		return checkWasm(root, log)
	}
	if opts.WasmOnly {
		start := time.Now()
		p, err := buildWasm(root)
		if err != nil {
			return err
		}
		if p == "" {
			return errors.New("wasm/module is absent: nothing to build")
		}
		fmt.Fprintf(log, "build: %s in %v\n", rel(root, p), time.Since(start).Round(time.Millisecond))
		return nil
	}
	webDir := filepath.Join(root, "web")
	distDir := filepath.Join(webDir, "dist")
	if _, err := os.Stat(filepath.Join(webDir, "node_modules", "@bjorn3", "browser_wasi_shim")); err != nil {
		return fmt.Errorf("web/node_modules is missing or incomplete: run `npm ci` in web/ (go tool task web does it)")
	}

	if !opts.SkipTypecheck {
		start := time.Now()
		if err := typecheck(webDir, log); err != nil {
			return err
		}
		fmt.Fprintf(log, "build: type-checked web/src in %v\n", time.Since(start).Round(time.Millisecond))
	}

	var wasmPath string
	if !opts.SkipWasm {
		start := time.Now()
		p, err := buildWasm(root)
		if err != nil {
			return err
		}
		wasmPath = p
		if p != "" {
			fmt.Fprintf(log, "build: %s in %v\n", rel(root, p), time.Since(start).Round(time.Millisecond))
		} else {
			fmt.Fprintln(log, "build: wasm/module is absent: building the page without kernels.wasm (no browser-wasm engine)")
		}
	}

	if err := cleanDist(distDir); err != nil {
		return err
	}
	start := time.Now()
	files, err := bundle(webDir, distDir, log)
	if err != nil {
		return err
	}
	if wasmPath != "" {
		name, err := copyHashed(wasmPath, distDir, "kernels", ".wasm")
		if err != nil {
			return err
		}
		files["kernels.wasm"] = name
	}
	m := web.Manifest{Files: files, Built: time.Now().UTC().Truncate(time.Second)}
	if err := writeManifest(distDir, m); err != nil {
		return err
	}
	if err := writeIndex(webDir, distDir, m); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		st, _ := os.Stat(filepath.Join(distDir, files[k]))
		size := int64(0)
		if st != nil {
			size = st.Size()
		}
		fmt.Fprintf(log, "build:   %-15s web/dist/%s (%d KiB)\n", k, files[k], (size+1023)/1024)
	}
	fmt.Fprintf(log, "build: bundled web/ into web/dist in %v\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// moduleRoot finds the folder of go.mod at or above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find the module root: no go.mod at or above the working directory: run from inside the wasmgap module or pass -root")
		}
		dir = parent
	}
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}

// typecheck runs the TypeScript compiler over web/ in strict mode without emitting.
func typecheck(webDir string, log io.Writer) error {
	tsc := filepath.Join(webDir, "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		return fmt.Errorf("type check: %s is missing: run `npm ci` in web/", rel(filepath.Dir(webDir), tsc))
	}
	cmd := exec.Command(tsc, "--noEmit", "--pretty", "false", "-p", webDir)
	cmd.Dir = webDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		log.Write(out)
		return fmt.Errorf("type check of web/src failed (tsc --noEmit): %w", err)
	}
	return nil
}

// checkWasm builds wasm/module into a temporary file with wasm.Build and compares it with
// the committed wasm/kernels.wasm.
func checkWasm(root string, log io.Writer) error {
	start := time.Now()
	dir, err := os.MkdirTemp("", "wasmgap-check-wasm-")
	if err != nil {
		return fmt.Errorf("check kernels.wasm: %w", err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "kernels.wasm")
	if err := wasm.Build(context.Background(), filepath.Join(root, filepath.FromSlash(wasm.SourceDir)), out); err != nil {
		return err
	}
	built, err := os.ReadFile(out)
	if err != nil {
		return fmt.Errorf("check kernels.wasm: %w", err)
	}
	if err := wasm.CheckBuilt(built); err != nil {
		return err
	}
	fmt.Fprintf(log, "build: %s is what %s builds to (%d bytes) in %v\n", wasm.ModulePath, wasm.SourceDir, len(built), time.Since(start).Round(time.Millisecond))
	return nil
}

// buildWasm compiles wasm/module into wasm/kernels.wasm with wasm.Build, or returns "" when
// the module's folder does not exist.
func buildWasm(root string) (string, error) {
	src := filepath.Join(root, filepath.FromSlash(wasm.SourceDir))
	if _, err := os.Stat(src); err != nil {
		return "", nil
	}
	out := filepath.Join(root, filepath.FromSlash(wasm.ModulePath))
	if err := wasm.Build(context.Background(), src, out); err != nil {
		return "", err
	}
	return out, nil
}

// cleanDist empties web/dist except its placeholder, so that no stale hashed file stays.
func cleanDist(distDir string) error {
	if err := os.MkdirAll(distDir, 0o755); err != nil {
		return fmt.Errorf("create web/dist: %w", err)
	}
	entries, err := os.ReadDir(distDir)
	if err != nil {
		return fmt.Errorf("read web/dist: %w", err)
	}
	for _, e := range entries {
		if e.Name() == "placeholder" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(distDir, e.Name())); err != nil {
			return fmt.Errorf("clean web/dist: %w", err)
		}
	}
	return nil
}

// bundle runs esbuild and returns the logical names of its outputs ("main.js",
// "main.css", "worker-wasm.js", "worker-js.js") with their hashed file names.
func bundle(webDir, distDir string, log io.Writer) (map[string]string, error) {
	entries := make([]string, len(entryPoints))
	for i, e := range entryPoints {
		entries[i] = filepath.Join(webDir, "src", e)
	}
	result := api.Build(api.BuildOptions{
		EntryPoints:       entries,
		Outdir:            distDir,
		AbsWorkingDir:     webDir,
		EntryNames:        "[name]-[hash]",
		AssetNames:        "[name]-[hash]",
		Bundle:            true,
		Format:            api.FormatESModule,
		Platform:          api.PlatformBrowser,
		Target:            api.ES2022,
		MinifyWhitespace:  true,
		MinifyIdentifiers: true,
		MinifySyntax:      true,
		Sourcemap:         api.SourceMapLinked,
		Metafile:          true,
		Write:             true,
		LogLevel:          api.LogLevelSilent,
		Tsconfig:          filepath.Join(webDir, "tsconfig.json"),
	})
	printMessages(log, result.Warnings, api.WarningMessage)
	if len(result.Errors) > 0 {
		printMessages(log, result.Errors, api.ErrorMessage)
		return nil, fmt.Errorf("esbuild: %d error(s) bundling web/src", len(result.Errors))
	}
	var meta struct {
		Outputs map[string]struct {
			EntryPoint string `json:"entryPoint"`
			CSSBundle  string `json:"cssBundle"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(result.Metafile), &meta); err != nil {
		return nil, fmt.Errorf("read esbuild's metafile: %w", err)
	}
	files := map[string]string{}
	for out, o := range meta.Outputs {
		if o.EntryPoint == "" {
			continue
		}
		logical := strings.TrimSuffix(filepath.Base(o.EntryPoint), filepath.Ext(o.EntryPoint))
		files[logical+".js"] = filepath.Base(out)
		if o.CSSBundle != "" {
			files[logical+".css"] = filepath.Base(o.CSSBundle)
		}
	}
	for _, e := range entryPoints {
		want := strings.TrimSuffix(e, ".ts") + ".js"
		if files[want] == "" {
			return nil, fmt.Errorf("esbuild wrote no output for %s", e)
		}
	}
	return files, nil
}

// printMessages prints esbuild's diagnostics as esbuild itself does: file, line, column,
// the source line and a caret.
func printMessages(w io.Writer, msgs []api.Message, kind api.MessageKind) {
	if len(msgs) == 0 {
		return
	}
	color := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			color = true
		}
	}
	for _, s := range api.FormatMessages(msgs, api.FormatMessagesOptions{Kind: kind, Color: color, TerminalWidth: 100}) {
		io.WriteString(w, s)
	}
}

// copyHashed copies src into dir as <base>-<hash><ext> and returns that name.
func copyHashed(src, dir, base, ext string) (string, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", src, err)
	}
	sum := sha256.Sum256(b)
	name := base + "-" + strings.ToUpper(hex.EncodeToString(sum[:5])) + ext
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		return "", fmt.Errorf("write web/dist/%s: %w", name, err)
	}
	return name, nil
}

func writeManifest(distDir string, m web.Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(distDir, "manifest.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write web/dist/manifest.json: %w", err)
	}
	return nil
}

// writeIndex renders web/src/index.html with the hashed names into web/dist/index.html.
func writeIndex(webDir, distDir string, m web.Manifest) error {
	src := filepath.Join(webDir, "src", "index.html")
	tmpl, err := template.ParseFiles(src)
	if err != nil {
		return fmt.Errorf("read web/src/index.html: %w", err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, m); err != nil {
		return fmt.Errorf("render web/src/index.html: %w", err)
	}
	if err := os.WriteFile(filepath.Join(distDir, "index.html"), buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write web/dist/index.html: %w", err)
	}
	return nil
}
