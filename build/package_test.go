package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/wasm"
)

// TestWritePackage writes the npm package into a temporary folder, checks its files against
// the catalogue, and runs it under Node twice: through node:wasi, and through the loader's
// own WASI shim (the path browsers take), fed a fetch Response.
func TestWritePackage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kernels.wasm")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WritePackage(root, dir, "1.2.3"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"kernels.wasm", "index.mjs", "index.d.ts", "package.json", "README.md", "LICENSE", "catalogue.json", "catalogue.mjs", "catalogue.d.ts"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the package lacks %s: %v", f, err)
		}
	}

	var pkg map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	if pkg["name"] != "@wasmgap/kernels" || pkg["version"] != "1.2.3" || pkg["type"] != "module" {
		t.Errorf("package.json: name %v, version %v, type %v", pkg["name"], pkg["version"], pkg["type"])
	}
	for _, k := range []string{"dependencies", "devDependencies", "peerDependencies"} {
		if _, ok := pkg[k]; ok {
			t.Errorf("package.json has %s", k)
		}
	}
	// What npm publish warns about when missing, and what the package promises.
	for _, k := range []string{"description", "license", "repository", "keywords", "engines", "homepage", "bugs"} {
		if pkg[k] == nil {
			t.Errorf("package.json has no %s", k)
		}
	}
	if license, _ := os.ReadFile(filepath.Join(root, "LICENSE")); pkg["license"] != "MIT" || !strings.HasPrefix(string(license), "MIT License") {
		t.Errorf("package.json's license %v does not name the repository's LICENSE (%.20q)", pkg["license"], license)
	}
	pkgExports, _ := pkg["exports"].(map[string]any)
	for _, e := range []string{".", "./catalogue.mjs", "./catalogue.json", "./kernels.wasm", "./package.json"} {
		if pkgExports[e] == nil {
			t.Errorf("package.json does not export %s", e)
		}
	}

	dts, err := os.ReadFile(filepath.Join(dir, "index.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(dts), dtsMarker) || strings.Contains(string(readme), readmeMarker) {
		t.Error("a @kernels marker was left in index.d.ts or README.md")
	}
	for _, k := range kernels.All() {
		var params []string
		for _, p := range k.Params {
			params = append(params, regexp.QuoteMeta(p.Name)+`: number`)
		}
		methods := []string{k.Name}
		if legacy := wasm.LegacyExport(k); legacy != "" {
			methods = append(methods, legacy)
		}
		for _, m := range methods {
			re := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(m) + `\(` + strings.Join(params, ", ") + `\): bigint;$`)
			if !re.Match(dts) {
				t.Errorf("index.d.ts does not declare %s(%s): bigint", m, strings.Join(params, ", "))
			}
		}
		if !strings.Contains(string(readme), "| `"+k.Name+"` |") {
			t.Errorf("README.md's table lacks %s", k.Name)
		}
	}

	calls := []struct {
		name string
		args []int
	}{
		{"fib_it", []int{10}},
		{"fib_rec", []int{20}},
		{"ack", []int{2, 3}},
		{"test1", []int{2000, 100}},
		{"test8b", []int{1000}},
	}
	var want []string
	var jsCalls []string
	for _, c := range calls {
		k, err := kernels.Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprint(k.Expected(c.args)))
		args := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(c.args)), ", "), "[]")
		jsCalls = append(jsCalls, fmt.Sprintf("String(k.%s(%s))", k.Name, args))
	}
	script := `
const { load, kernels } = await import(process.env.PKG_INDEX);
const { readFile } = await import("node:fs/promises");
const run = (k) => [` + strings.Join(jsCalls, ", ") + `];
const out = {};
out.node = run(await load());
const bytes = await readFile(new URL("./kernels.wasm", process.env.PKG_INDEX));
const fetched = await load(new URL(process.env.PKG_HTTP + "/kernels.wasm"), { wasi: "builtin" });
out.fetched = run(fetched);
const lines = [];
const shim = await load(new Response(bytes, { headers: { "content-type": "application/wasm" } }),
  { wasi: "builtin", stdout: (l) => lines.push(l), stderr: (l) => lines.push(l) });
out.builtin = run(shim);
out.names = shim.kernels.map((k) => k.export);
out.sameKernels = shim.kernels === kernels;
const { kernels: catalogue } = await import(new URL("./catalogue.mjs", process.env.PKG_INDEX));
out.sameKernels &&= catalogue === kernels;
const errName = (f) => { try { f(); return "no error"; } catch (e) { return e.name; } };
out.errors = [
  errName(() => shim.ack(4, 1)),         // RangeError: out of range
  errName(() => shim.fib_rec("x")),      // TypeError: not a number
  errName(() => shim.fib_rec(1.5)),      // TypeError: not an integer
  errName(() => shim.fib_rec(10n)),      // TypeError: a bigint
  errName(() => shim.fib_rec()),         // TypeError: too few arguments
  errName(() => shim.call("nope")),      // RangeError: no such kernel
];
// The former names still work for one release.
out.aliases = [String(shim.loop_test1(2000, 100)), String(shim.call("loop_test8b", 1000))];
// A trap (V8's stack overflow) leaves the instance refusing calls until reloaded.
const node = await load();
out.trap = [errName(() => node.ack(3, 20)), String(node.trapped !== null), errName(() => node.fib_it(10))];
try { node.fib_it(10); } catch (e) { out.refusal = e.message; }
out.trap.push(String((await node.reload()).fib_it(10)), errName(() => node.call("fib_it", 10)));
out.lines = lines;
// fd_write and proc_exit of the shim, called as the Go runtime calls them when it aborts.
const { builtinWasi, WasiExit } = await import(process.env.PKG_INDEX);
const written = [];
const w = builtinWasi(await WebAssembly.compile(bytes), { stdout: (l) => written.push("1:" + l), stderr: (l) => written.push("2:" + l) });
const memory = new WebAssembly.Memory({ initial: 1 });
w.setInstance({ exports: { memory } });
const dv = new DataView(memory.buffer);
new Uint8Array(memory.buffer).set(new TextEncoder().encode("fatal error: out of memory\npart"), 100);
dv.setUint32(0, 100, true); dv.setUint32(4, 27, true); dv.setUint32(8, 127, true); dv.setUint32(12, 4, true);
const ws = w.imports.wasi_snapshot_preview1;
out.errno = [ws.fd_write(2, 0, 2, 200), dv.getUint32(200, true), ws.fd_write(1, 0, 1, 200), ws.fd_write(7, 0, 1, 200)];
try { ws.proc_exit(2); } catch (e) { out.exit = e instanceof WasiExit ? e.code : String(e); }
out.written = written;
console.log(JSON.stringify(out));
`
	cmd := exec.Command(node, "--no-warnings", "--input-type=module", "-e", script)
	// The browser's way in: fetch over HTTP, then the builtin shim.
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	cmd.Env = append(os.Environ(), "PKG_INDEX=file://"+filepath.ToSlash(filepath.Join(dir, "index.mjs")), "PKG_HTTP="+srv.URL)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stdout)
	}
	var got struct {
		Node, Builtin, Fetched, Names, Lines, Written []string
		Errno                                         []int
		Exit                                          int
		SameKernels                                   bool
		Errors, Aliases, Trap                         []string
		Refusal                                       string
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("node printed %q: %v", stdout, err)
	}
	for i, c := range calls {
		if i >= len(got.Node) || got.Node[i] != want[i] {
			t.Errorf("node:wasi: %s%v = %v, want %s", c.name, c.args, at(got.Node, i), want[i])
		}
		if i >= len(got.Builtin) || got.Builtin[i] != want[i] {
			t.Errorf("builtin WASI shim: %s%v = %v, want %s", c.name, c.args, at(got.Builtin, i), want[i])
		}
		if i >= len(got.Fetched) || got.Fetched[i] != want[i] {
			t.Errorf("fetched over HTTP, builtin WASI shim: %s%v = %v, want %s", c.name, c.args, at(got.Fetched, i), want[i])
		}
	}
	var exports []string
	for _, k := range kernels.All() {
		exports = append(exports, k.Export)
	}
	if strings.Join(got.Names, " ") != strings.Join(exports, " ") || !got.SameKernels {
		t.Errorf("the loader's kernels are %v (same as the export: %v), want %v", got.Names, got.SameKernels, exports)
	}
	if want := "RangeError TypeError TypeError TypeError TypeError RangeError"; strings.Join(got.Errors, " ") != want {
		t.Errorf("bad arguments (out of range, a string, 1.5, a bigint, none, an unknown kernel) threw %v, want %s", got.Errors, want)
	}
	if strings.Join(got.Aliases, " ") != fmt.Sprint(kernelValue(t, "test1", 2000, 100), " ", kernelValue(t, "test8b", 1000)) {
		t.Errorf("the former names loop_test1, loop_test8b returned %v", got.Aliases)
	}
	if strings.Join(got.Trap, " ") != "RangeError true Error 55 Error" || !strings.Contains(got.Refusal, "reload") {
		t.Errorf("a trap, then calls: %v (%q); want the trap, calls refused until reload, then 55 from the new instance", got.Trap, got.Refusal)
	}
	if len(got.Lines) != 0 {
		t.Errorf("the module wrote %q", got.Lines)
	}

	if fmt.Sprint(got.Errno) != "[0 31 0 8]" || got.Exit != 2 ||
		strings.Join(got.Written, "|") != "2:fatal error: out of memory|1:fatal error: out of memory|2:part" {
		t.Errorf("the shim's fd_write and proc_exit: errno %v, exit %d, lines %q", got.Errno, got.Exit, got.Written)
	}

	// A bundler targeting browsers takes the loader as it is (esbuild here).
	res := api.Build(api.BuildOptions{
		EntryPoints: []string{filepath.Join(dir, "index.mjs")},
		Bundle:      true,
		Platform:    api.PlatformBrowser,
		Format:      api.FormatESModule,
		Target:      api.ES2022,
		LogLevel:    api.LogLevelSilent,
		Write:       false,
		Outdir:      filepath.Join(t.TempDir(), "out"),
	})
	for _, m := range append(res.Errors, res.Warnings...) {
		t.Errorf("esbuild (platform browser) over index.mjs: %s", m.Text)
	}

	// The declarations type-check for a TypeScript user, where web/ has its TypeScript
	// (npm ci in web/, as CI runs it).
	tsc := filepath.Join(root, "web", "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Log("web/node_modules/.bin/tsc is absent: index.d.ts not type-checked")
		return
	}
	user := t.TempDir()
	if err := os.MkdirAll(filepath.Join(user, "node_modules", "@wasmgap"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(user, "node_modules", "@wasmgap", "kernels")); err != nil {
		t.Fatal(err)
	}
	ts := `import { load, kernels, type Kernels } from "@wasmgap/kernels";
import { kernels as catalogue } from "@wasmgap/kernels/catalogue.mjs";
const k: Kernels = await load();
const r: bigint = k.fib_it(10) + k.ack(2, 3) + k.test1(50000, 1000) + k.loop_test1(50000, 1000) + k.call("test8b", 10);
const fresh: Kernels = await k.reload();
console.log(r, fresh.trapped, kernels.length, kernels[0].params[0].max, catalogue.length);
`
	if err := os.WriteFile(filepath.Join(user, "use.ts"), []byte(ts), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(user, "package.json"), []byte(`{"type": "module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, res := range [][]string{{"--module", "nodenext", "--moduleResolution", "nodenext"}, {"--module", "esnext", "--moduleResolution", "bundler"}} {
		args := append([]string{"--noEmit", "--strict", "--pretty", "false", "--target", "es2022", "--lib", "es2022,dom"}, res...)
		cmd := exec.Command(tsc, append(args, "use.ts")...)
		cmd.Dir = user
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("tsc %v over a user of the package: %v\n%s", res, err, out)
		}
	}
}

// kernelValue is the catalogue's value of a kernel call, as a string.
func kernelValue(t *testing.T, name string, args ...int) string {
	t.Helper()
	k, err := kernels.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(k.Expected(args))
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(missing)"
}
