package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/wasm"
)

// DefaultPackageDir is where `go tool task package` writes the npm package, relative to the
// repository root.
const DefaultPackageDir = "wasm/dist/package"

// versionPlaceholder is the version of wasm/package/package.json, replaced when written.
const versionPlaceholder = "0.0.0-placeholder"

// Markers in index.d.ts and README.md where the catalogue's kernels go.
const (
	dtsMarker    = "/* @kernels */"
	readmeMarker = "<!-- @kernels -->"
)

// pkgParam and pkgKernel are a kernel as the package describes it (catalogue.json,
// catalogue.mjs): the catalogue's fields a host needs.
type pkgParam struct {
	Name    string `json:"name"`
	Doc     string `json:"doc"`
	Default int    `json:"default"`
	Min     int    `json:"min"`
	Max     int    `json:"max"`
}

type pkgKernel struct {
	Name   string `json:"name"`
	Export string `json:"export"`
	// Aliases are the former names of the kernel's method and export (wasm.LegacyExport),
	// kept for one release.
	Aliases []string   `json:"aliases,omitempty"`
	Group   string     `json:"group"`
	Summary string     `json:"summary"`
	Params  []pkgParam `json:"params"`
}

func packageCatalogue() []pkgKernel {
	var out []pkgKernel
	for _, k := range kernels.All() {
		pk := pkgKernel{Name: k.Name, Export: k.Export, Group: k.Group, Summary: k.Summary, Params: []pkgParam{}}
		if legacy := wasm.LegacyExport(k); legacy != "" {
			pk.Aliases = []string{legacy}
		}
		for _, p := range k.Params {
			pk.Params = append(pk.Params, pkgParam(p))
		}
		out = append(out, pk)
	}
	return out
}

// WritePackage builds kernels.wasm with wasm.Build from root's wasm/module and writes the
// npm package @wasmgap/kernels into dir: kernels.wasm, the files of wasm/package, the
// repository's LICENSE, and the
// kernel catalogue (catalogue.json, catalogue.mjs, the methods of index.d.ts and the table of
// README.md) generated from kernels.All(), so that the package never drifts from the module.
func WritePackage(root, dir, version string) error {
	if version == "" {
		version = versionPlaceholder
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clean %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	src := filepath.Join(root, filepath.FromSlash(wasm.SourceDir))
	if err := wasm.Build(context.Background(), src, filepath.Join(dir, "kernels.wasm")); err != nil {
		return err
	}
	cat := packageCatalogue()
	catJSON, err := json.MarshalIndent(cat, "", "  ")
	if err != nil {
		return err
	}
	license, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		return fmt.Errorf("the package's licence: %w", err)
	}
	files := map[string][]byte{
		"LICENSE":        license,
		"catalogue.json": append(catJSON, '\n'),
		"catalogue.mjs": []byte("// Generated from wasmgap's kernel catalogue (kernels.All()) by go run ./build -package.\n" +
			"export const kernels = Object.freeze(" + string(catJSON) + ");\n"),
	}
	err = fs.WalkDir(wasm.Package, "package", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(wasm.Package, p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "package/")
		switch name {
		case "package.json":
			if !bytes.Contains(b, []byte(versionPlaceholder)) {
				return fmt.Errorf("wasm/package/package.json: no version placeholder %q", versionPlaceholder)
			}
			b = bytes.Replace(b, []byte(versionPlaceholder), []byte(version), 1)
		case "index.d.ts":
			if b, err = replaceMarker(b, dtsMarker, dtsMethods(cat)); err != nil {
				return fmt.Errorf("wasm/package/index.d.ts: %w", err)
			}
		case "README.md":
			if b, err = replaceMarker(b, readmeMarker, readmeTable(cat)); err != nil {
				return fmt.Errorf("wasm/package/README.md: %w", err)
			}
		}
		files[name] = b
		return nil
	})
	if err != nil {
		return fmt.Errorf("read wasm/package: %w", err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// replaceMarker replaces the line holding marker with text, keeping the line's indentation.
func replaceMarker(b []byte, marker, text string) ([]byte, error) {
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != marker {
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		var out []string
		for _, t := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			if t == "" {
				out = append(out, "")
			} else {
				out = append(out, indent+t)
			}
		}
		lines = append(lines[:i], append(out, lines[i+1:]...)...)
		return []byte(strings.Join(lines, "\n")), nil
	}
	return nil, fmt.Errorf("no line %q", marker)
}

func rangeText(p pkgParam) string { return fmt.Sprintf("%d–%d, default %d", p.Min, p.Max, p.Default) }

func dtsMethods(cat []pkgKernel) string {
	var b strings.Builder
	for i, k := range cat {
		if i > 0 {
			b.WriteString("\n")
		}
		var params, doc []string
		for _, p := range k.Params {
			doc = append(doc, fmt.Sprintf(" * @param %s %s (%s)\n", p.Name, strings.ReplaceAll(p.Doc, "*/", "*\\/"), rangeText(p)))
			params = append(params, p.Name+": number")
		}
		fmt.Fprintf(&b, "/**\n * %s: %s\n%s */\n%s(%s): bigint;\n", k.Name, strings.ReplaceAll(k.Summary, "*/", "*\\/"), strings.Join(doc, ""), k.Name, strings.Join(params, ", "))
		for _, alias := range k.Aliases {
			fmt.Fprintf(&b, "/** @deprecated %s's former name, kept for one release: call %s. */\n%s(%s): bigint;\n", k.Name, k.Name, alias, strings.Join(params, ", "))
		}
	}
	return b.String()
}

func readmeTable(cat []pkgKernel) string {
	var b strings.Builder
	b.WriteString("| method | parameters (range, default) | what it computes |\n| --- | --- | --- |\n")
	var aliases []string
	for _, k := range cat {
		var params []string
		for _, p := range k.Params {
			params = append(params, fmt.Sprintf("`%s` (%s)", p.Name, rangeText(p)))
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.Name, strings.Join(params, ", "), strings.ReplaceAll(k.Summary, "|", "\\|"))
		for _, a := range k.Aliases {
			aliases = append(aliases, fmt.Sprintf("`%s` (%s)", a, k.Name))
		}
	}
	if len(aliases) > 0 {
		fmt.Fprintf(&b, "\nThe former names of the loop tests' methods and exports, %s, still work in this release and will be removed in the next: call the names above.\n", strings.Join(aliases, ", "))
	}
	return b.String()
}
