package explain

import (
	"context"
	"debug/elf"
	"debug/gosym"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/wasmgap/wasmgap/internal/engine/external"
	"github.com/wasmgap/wasmgap/internal/engine/gccgo"
	"github.com/wasmgap/wasmgap/kernels"
)

// elfFunction returns the machine code of the function named name in the ELF file at
// path, from its symbol table: the symbol whose name is name or, when exact is false, the
// first that starts with name followed by '.' (gcc's clones: fib_rec.part.0).
func elfFunction(path, name string, exact bool) (Code, string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return Code{}, "", fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return Code{}, "", fmt.Errorf("%s has no symbol table (a stripped binary): %w", path, err)
	}
	var found *elf.Symbol
	for i := range syms {
		s := &syms[i]
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 {
			continue
		}
		if s.Name == name {
			found = s
			break
		}
		if !exact && found == nil && strings.HasPrefix(s.Name, name+".") {
			found = s
		}
	}
	if found == nil {
		return Code{}, "", fmt.Errorf("%s has no function %s in its symbol table (inlined, or stripped)", path, name)
	}
	if int(found.Section) >= len(f.Sections) {
		return Code{}, "", fmt.Errorf("%s: symbol %s has no section", path, name)
	}
	sec := f.Sections[found.Section]
	b := make([]byte, found.Size)
	if _, err := sec.ReadAt(b, int64(found.Value-sec.Addr)); err != nil {
		return Code{}, "", fmt.Errorf("read %s of %s: %w", name, path, err)
	}
	arch := map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64"}[f.Machine]
	byAddr := map[uint64]string{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			byAddr[s.Value] = s.Name
		}
	}
	symbol := func(a uint64) string { return byAddr[a] }
	return Code{Bytes: b, Addr: found.Value, Arch: arch, pie: f.Type == elf.ET_DYN, Symbol: symbol}, found.Name, nil
}

// explainNative lists the kernel's function as gc compiled it into this very binary,
// which the native engine calls (an ahead-of-time compiler: the warm-up changes nothing),
// read by the binary's Go line table (.gopclntab, which no build strips), each instruction
// with its Go line. A kernel gc inlined into its caller (FibIt into the catalogue's call of
// it) has no code of its own: the listing is the function that holds most of the kernel's
// lines, the kernel's instructions known by their lines.
func explainNative(_ context.Context, r request) ([]Listing, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this program's file: %w", err)
	}
	g, err := readGoBinary(exe)
	if err != nil {
		return nil, err
	}
	fn := g.tab.LookupFunc(goPackage + r.k.Func)
	note := ""
	if fn == nil {
		if fn, err = inliningCaller(g.tab, r.k); err != nil {
			return nil, err
		}
		note = fmt.Sprintf("gc inlined kernels.%s into %s, where the native engine calls it: the listing is that function's, the kernel's instructions are those of its lines", r.k.Func, fn.Name)
	}
	l, err := machineListing(r.engine, "gc "+runtime.Version(), fn.Name, "the Go line table of "+filepath.Base(exe), g.function(fn))
	if err != nil {
		return nil, err
	}
	for i := range l.Lines {
		file, line, _ := g.tab.PCToLine(l.Addr + uint64(l.Lines[i].Offset))
		l.Lines[i].SourceFile, l.Lines[i].SourceLine = sourceName(file), line
	}
	if note != "" {
		l.Notes = append(l.Notes, note)
	}
	return []Listing{l}, nil
}

// goPackage prefixes the kernels' functions in the binary's tables.
const goPackage = "github.com/wasmgap/wasmgap/kernels."

// goBinary is a Go binary's code and its line table.
type goBinary struct {
	tab  *gosym.Table
	text []byte // the .text section, from textAt
	at   uint64
	arch string
}

// readGoBinary reads the code and the Go line table (.gopclntab) of the ELF file at path.
func readGoBinary(path string) (*goBinary, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	pcln, text := f.Section(".gopclntab"), f.Section(".text")
	if pcln == nil || text == nil {
		return nil, fmt.Errorf("%s has no Go line table (.gopclntab)", filepath.Base(path))
	}
	b, err := pcln.Data()
	if err != nil {
		return nil, fmt.Errorf("read the line table of %s: %w", filepath.Base(path), err)
	}
	code, err := text.Data()
	if err != nil {
		return nil, fmt.Errorf("read the code of %s: %w", filepath.Base(path), err)
	}
	// The table counts from runtime.text, which need not be where .text starts (as go
	// tool objdump reads it); a stripped binary (go test's, -ldflags=-s) has no symbols,
	// but its runtime's module data holds that start.
	start, ok := moduleText(f, pcln, text)
	if !ok {
		start = text.Addr
	}
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == "runtime.text" {
			start = s.Value
		}
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(b, start))
	if err != nil {
		return nil, fmt.Errorf("read the line table of %s: %w", filepath.Base(path), err)
	}
	arch := map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64"}[f.Machine]
	return &goBinary{tab: tab, text: code, at: text.Addr, arch: arch}, nil
}

// moduleText finds runtime.text's address in a binary without symbols: the runtime's
// first module data (runtime.firstmoduledata, in .go.module, or .noptrdata before Go
// 1.26) starts with the line
// table's address and holds the text's start after the table's six slices, findfunctab,
// minpc and maxpc (64-bit targets; runtime/symtab.go's moduledata).
func moduleText(f *elf.File, pcln, text *elf.Section) (uint64, bool) {
	const textAt = 8 + 6*24 + 3*8
	for _, name := range []string{".go.module", ".noptrdata"} {
		data := f.Section(name)
		if data == nil {
			continue
		}
		b, err := data.Data()
		if err != nil {
			continue
		}
		for off := 0; off+textAt+8 <= len(b); off += 8 {
			if binary.LittleEndian.Uint64(b[off:]) != pcln.Addr {
				continue
			}
			names := binary.LittleEndian.Uint64(b[off+8:]) // funcnametab's data, inside the table
			start := binary.LittleEndian.Uint64(b[off+textAt:])
			if names > pcln.Addr && names < pcln.Addr+pcln.Size && start >= text.Addr && start < text.Addr+text.Size {
				return start, true
			}
		}
	}
	return 0, false
}

// function is fn's machine code, without the padding that aligns the next function
// (int3 on amd64, zero words on arm64), its calls' targets named by the line table.
func (g *goBinary) function(fn *gosym.Func) Code {
	var b []byte
	if fn.Entry >= g.at && fn.End <= g.at+uint64(len(g.text)) {
		b = g.text[fn.Entry-g.at : fn.End-g.at]
	}
	for g.arch == "amd64" && len(b) > 0 && b[len(b)-1] == 0xcc {
		b = b[:len(b)-1]
	}
	for g.arch == "arm64" && len(b) >= 4 && string(b[len(b)-4:]) == "\x00\x00\x00\x00" {
		b = b[:len(b)-4]
	}
	symbol := func(a uint64) string {
		if f := g.tab.PCToFunc(a); f != nil && f.Entry == a {
			return f.Name
		}
		return ""
	}
	return Code{Bytes: b, Addr: fn.Entry, Arch: g.arch, Symbol: symbol}
}

// inliningCaller names the function of package kernels that holds the most instructions
// of the kernel's lines: the caller gc inlined it into.
func inliningCaller(tab *gosym.Table, k *kernels.Kernel) (*gosym.Func, error) {
	fset, file, _, fd, err := kernelFunc(k)
	if err != nil {
		return nil, err
	}
	first, last := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
	var best *gosym.Func
	most := 0
	for i := range tab.Funcs {
		fn := &tab.Funcs[i]
		if !strings.HasPrefix(fn.Name, goPackage) {
			continue
		}
		n := 0
		for pc := fn.Entry; pc < fn.End; pc++ {
			if f, line, _ := tab.PCToLine(pc); sourceName(f) == "kernels/"+file && line >= first && line <= last {
				n++
			}
		}
		if n > most {
			best, most = fn, n
		}
	}
	if best == nil {
		return nil, fmt.Errorf("no function of this binary holds code of kernels.%s (kernels/%s:%d-%d)", k.Func, file, first, last)
	}
	return best, nil
}

// sourceName is a Go file as a listing names it: "kernels/recursion.go" for the kernels'
// files, the base name for the others (no path of the machine that built the binary).
func sourceName(file string) string {
	if i := strings.LastIndex(file, "/kernels/"); i >= 0 {
		return file[i+1:]
	}
	return filepath.Base(file)
}

// explainC lists the kernel's function in the c engine's driver, built by gcc -O2.
func explainC(ctx context.Context, r request) ([]Listing, error) {
	path, done, err := external.CBinary(ctx, external.Options{})
	if err != nil {
		return nil, err
	}
	defer done()
	c, sym, err := elfFunction(path, r.k.Name, false)
	if err != nil {
		return nil, err
	}
	// gcc may split a function (fib_rec.part.0); a call of the part or the whole is the
	// recursion.
	self := func(_ int, target uint64) bool { return target == c.Addr }
	if whole, _, err := elfFunction(path, r.k.Name, true); err == nil && whole.Addr != c.Addr {
		self = func(_ int, target uint64) bool { return target == c.Addr || target == whole.Addr }
	}
	c.Self = self
	l, err := machineListing(r.engine, "gcc -O2", sym, "the symbol table of "+path, c)
	if err != nil {
		return nil, err
	}
	if r.opts.Profile {
		prof, _, err := warmDriver(ctx, r, external.NewEngine(r.engine, external.Options{}))
		if err != nil {
			return nil, err
		}
		// gcc's binaries are position independent: the listing moves to where the
		// profiled driver mapped its file.
		if base, ok := loadBase(prof.maps, path); ok && prof.err == nil && c.pie {
			l.Addr += base
		}
		ls := []Listing{l}
		prof.apply(ls)
		if sym != r.k.Name {
			ls[0].Notes = append(ls[0].Notes, fmt.Sprintf("gcc split %s: the listing is %s, where its work is", r.k.Name, sym))
		}
		return ls, nil
	}
	if sym != r.k.Name {
		l.Notes = append(l.Notes, fmt.Sprintf("gcc split %s: the listing is %s, where its work is", r.k.Name, sym))
	}
	return []Listing{l}, nil
}

// explainGCCGo lists the kernel's function in the gccgo engine's driver, the same Go file
// compiled by gccgo -O2 (an ahead-of-time compiler: the warm-up changes nothing but the
// profile's run), where the kernels are functions of package main.
func explainGCCGo(ctx context.Context, r request) ([]Listing, error) {
	path, done, err := gccgo.Binary(ctx, gccgo.Options{})
	if err != nil {
		return nil, err
	}
	defer done()
	c, sym, err := elfFunction(path, "main."+r.k.Func, true)
	if err != nil {
		return nil, err
	}
	l, err := machineListing(r.engine, "gccgo -O2", sym, "the symbol table of "+path, c)
	if err != nil {
		return nil, err
	}
	ls := []Listing{l}
	if r.opts.Profile {
		prof, _, err := warmDriver(ctx, r, gccgo.New(gccgo.Options{}))
		if err != nil {
			return nil, err
		}
		if base, ok := loadBase(prof.maps, path); ok && prof.err == nil && c.pie {
			ls[0].Addr += base
		}
		prof.apply(ls)
	}
	return ls, nil
}

// errNoTool is wrapped by a refusal for a missing program.
var errNoTool = errors.New("not installed")

// loadBase is where a process mapped the start of the file at path, from its
// /proc/PID/maps: the mapping of the file at offset 0.
func loadBase(maps, path string) (uint64, bool) {
	for _, line := range strings.Split(maps, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[2] != "00000000" || f[5] != path {
			continue
		}
		lo, _, _ := strings.Cut(f[0], "-")
		base, err := strconv.ParseUint(lo, 16, 64)
		return base, err == nil
	}
	return 0, false
}
