package explain

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/wasmgap/wasmgap/internal/engine/driver"
	"github.com/wasmgap/wasmgap/internal/engine/wazero"
)

// wazeroCacheMagic starts every module in wazero's compilation cache (wazevo's
// serializeCompiledModule): the magic, the wazero version, the function offsets, then the
// executable machine code.
var wazeroCacheMagic = []byte("WAZEVO")

// wazeroCode is a module's machine code as wazero's compiler made it.
type wazeroCode struct {
	version    string
	offsets    []uint64 // of each local function in executable
	executable []byte
}

// readWazeroCache parses one file of wazero's compilation cache.
func readWazeroCache(b []byte) (*wazeroCode, error) {
	if !bytes.HasPrefix(b, wazeroCacheMagic) || len(b) < len(wazeroCacheMagic)+1 {
		return nil, errors.New("not a module of wazero's compilation cache (no WAZEVO magic)")
	}
	off := len(wazeroCacheMagic)
	vlen := int(b[off])
	off++
	if off+vlen+4 > len(b) {
		return nil, errors.New("wazero cache entry cut short in its header")
	}
	c := &wazeroCode{version: string(b[off : off+vlen])}
	off += vlen
	n := int(binary.LittleEndian.Uint32(b[off:]))
	off += 4
	if n < 0 || off+8*n+8 > len(b) {
		return nil, errors.New("wazero cache entry cut short in its function offsets")
	}
	c.offsets = make([]uint64, n)
	for i := range c.offsets {
		c.offsets[i] = binary.LittleEndian.Uint64(b[off:])
		off += 8
	}
	size := binary.LittleEndian.Uint64(b[off:])
	off += 8
	if size > uint64(len(b)-off) {
		return nil, errors.New("wazero cache entry cut short in its machine code")
	}
	c.executable = b[off : off+int(size)]
	return c, nil
}

// function returns local function i's code, without the zero bytes that align the next.
func (c *wazeroCode) function(i int) ([]byte, error) {
	if i < 0 || i >= len(c.offsets) {
		return nil, fmt.Errorf("function %d is not among the module's %d compiled functions", i, len(c.offsets))
	}
	end := uint64(len(c.executable))
	if i+1 < len(c.offsets) {
		end = c.offsets[i+1]
	}
	if c.offsets[i] > end || end > uint64(len(c.executable)) {
		return nil, fmt.Errorf("function %d's offsets are out of order", i)
	}
	code := c.executable[c.offsets[i]:end]
	for pad := 0; pad < 15 && len(code) > 0 && code[len(code)-1] == 0; pad++ {
		code = code[:len(code)-1]
	}
	return code, nil
}

// wazeroCacheDir is where explain has wazero keep the module it compiles: one directory
// per module, so that its one entry is the module's.
func wazeroCacheDir(module []byte) (string, error) {
	root := wazero.DefaultCacheDir()
	if root == "" {
		return "", errors.New("no user cache directory to hold wazero's compiled code ($HOME or $XDG_CACHE_HOME unset)")
	}
	sum := sha256.Sum256(module)
	return filepath.Join(root, "explain", hex.EncodeToString(sum[:8])), nil
}

// loadWazero compiles module with the wazero-compiler engine's own settings into a cache
// directory of its own (or finds it compiled there), and returns the engine, ready to run,
// and the compiled code as wazero wrote it.
func loadWazero(ctx context.Context, module []byte) (*wazero.Engine, *wazeroCode, error) {
	dir, err := wazeroCacheDir(module)
	if err != nil {
		return nil, nil, err
	}
	e := wazero.New(wazero.Options{Module: module, CacheDir: dir})
	if _, err := e.Load(ctx); err != nil {
		return nil, nil, err
	}
	var entry string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasSuffix(path, ".tmp") {
			entry = path
		}
		return nil
	})
	if entry == "" {
		_ = e.Close(ctx)
		return nil, nil, fmt.Errorf("wazero wrote no compiled module under %s", dir)
	}
	b, err := os.ReadFile(entry)
	if err != nil {
		_ = e.Close(ctx)
		return nil, nil, err
	}
	code, err := readWazeroCache(b)
	if err != nil {
		_ = e.Close(ctx)
		return nil, nil, fmt.Errorf("%s: %w", entry, err)
	}
	return e, code, nil
}

// noWazeroLines says why wazero's code carries no Go line: wazero keeps a map from its
// machine code to the wasm's offsets (wazevo's source map) only for a module with DWARF
// lines, unexported, and the wasm holds no Go line for those offsets (noWasmLines).
const noWazeroLines = "no line table for this tier: wazero maps its machine code back to the wasm only for a module with DWARF lines, which Go does not write into kernels.wasm"

// explainWazero lists the kernel's function as wazero's optimizing compiler compiled it,
// read from wazero's compilation cache (the bytes it maps and runs; an ahead-of-time
// compiler, so the warm-up changes nothing).
func explainWazero(ctx context.Context, r request) ([]Listing, error) {
	module, err := moduleBytes()
	if err != nil {
		return nil, err
	}
	return wazeroListing(ctx, r, module, "")
}

// explainWazeroOpt lists the kernel's function as wazero's compiler compiled kernels.wasm
// after binaryen's wasm-opt -O3 (the wazero-compiler-opt engine), and the optimised wasm
// function beside it: what the optimiser changed.
func explainWazeroOpt(ctx context.Context, r request) ([]Listing, error) {
	module, err := optimizedModule(ctx)
	if err != nil {
		return nil, err
	}
	ls, err := wazeroListing(ctx, r, module, "wasm-opt -O3, then ")
	if err != nil {
		return nil, err
	}
	w, err := hotWasmListing(ctx, module, r.k, "wasm after wasm-opt "+strings.Join(driver.WasmOptFlags, " "))
	if err != nil {
		ls[0].Notes = append(ls[0].Notes, "the optimised wasm is not listed: "+err.Error())
		return ls, nil
	}
	return append(ls, w), nil
}

// optimizedModule is the module to explain after wasm-opt (cached on disk).
func optimizedModule(ctx context.Context) ([]byte, error) {
	module, err := moduleBytes()
	if err != nil {
		return nil, err
	}
	return driver.OptimizedModule(ctx, module)
}

// wazeroListing lists the kernel's function in module as wazero's compiler compiled it.
func wazeroListing(ctx context.Context, r request, module []byte, tierPrefix string) ([]Listing, error) {
	names, name, note, err := hotWasmFunc(module, r.k)
	if err != nil {
		return nil, err
	}
	idx := names.byName[name]
	e, code, err := loadWazero(ctx, module)
	if err != nil {
		return nil, err
	}
	defer e.Close(ctx)
	fn, err := code.function(idx - names.imported)
	if err != nil {
		return nil, err
	}
	// The code's address in this process, where the engine mapped it (the offsets alone
	// when it cannot be found: the listing is the same, a profile cannot be attributed).
	from := "wazero's compilation cache, mapped by this process"
	base, err := executableBase(code.executable[:min(64, len(code.executable))])
	if err != nil {
		from = "wazero's compilation cache (" + err.Error() + ": addresses are offsets in the module's code)"
	}
	c := Code{Bytes: fn, Addr: base + code.offsets[idx-names.imported], Arch: runtime.GOARCH}
	l, err := machineListing(r.engine, tierPrefix+"wazero "+code.version+" optimizing compiler", name, from, c)
	if err != nil {
		return nil, err
	}
	if note != "" {
		l.Notes = append(l.Notes, note)
	}
	l.NoLines = noWazeroLines
	return []Listing{l}, nil
}
