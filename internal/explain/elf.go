package explain

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/wasmgap/wasmgap/internal/engine/external"
	"github.com/wasmgap/wasmgap/internal/engine/gccgo"
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
// which the native engine calls (an ahead-of-time compiler: the warm-up changes nothing).
func explainNative(_ context.Context, r request) ([]Listing, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this program's file: %w", err)
	}
	name := "github.com/wasmgap/wasmgap/kernels." + r.k.Func
	c, sym, err := elfFunction(exe, name, true)
	if err != nil {
		return nil, err
	}
	l, err := machineListing(r.engine, "gc "+runtime.Version(), sym, "the symbol table of "+exe, c)
	if err != nil {
		return nil, err
	}
	return []Listing{l}, nil
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
