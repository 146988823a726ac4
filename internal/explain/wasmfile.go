package explain

import (
	"bytes"
	"errors"
	"fmt"
)

// wasmNames is what a module's binary says about its functions: how many are imported
// (they come first in the function index space) and each function's name from the
// "name" custom section.
type wasmNames struct {
	imported int
	byName   map[string]int // function index by name
}

// readWasmNames reads the import and name sections of a wasm binary.
func readWasmNames(b []byte) (*wasmNames, error) {
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) {
		return nil, errors.New("not a WebAssembly binary (no \\0asm magic)")
	}
	w := &wasmNames{byName: map[string]int{}}
	r := &reader{b: b, off: 8}
	for r.off < len(b) {
		id := r.byte()
		size := int(r.uleb())
		if r.err != nil || r.off+size > len(b) {
			return nil, fmt.Errorf("section at byte %d is cut short", r.off)
		}
		sec := &reader{b: b[:r.off+size], off: r.off}
		r.off += size
		switch id {
		case 2: // imports
			n := int(sec.uleb())
			for i := 0; i < n && sec.err == nil; i++ {
				sec.name()
				sec.name()
				kind := sec.byte()
				switch kind {
				case 0: // function: type index
					sec.uleb()
					w.imported++
				case 1: // table: reftype, limits
					sec.byte()
					sec.limits()
				case 2: // memory
					sec.limits()
				case 3: // global: valtype, mut
					sec.byte()
					sec.byte()
				case 4: // tag: attribute, type index
					sec.byte()
					sec.uleb()
				default:
					return nil, fmt.Errorf("import %d has unknown kind %d", i, kind)
				}
			}
			if sec.err != nil {
				return nil, fmt.Errorf("import section: %w", sec.err)
			}
		case 0: // custom
			if sec.name() != "name" || sec.err != nil {
				continue
			}
			for sec.off < len(sec.b) && sec.err == nil {
				sub := sec.byte()
				n := int(sec.uleb())
				end := sec.off + n
				if sub != 1 {
					sec.off = end
					continue
				}
				count := int(sec.uleb())
				for i := 0; i < count && sec.err == nil; i++ {
					idx := int(sec.uleb())
					w.byName[sec.name()] = idx
				}
				sec.off = end
			}
		}
	}
	if len(w.byName) == 0 {
		return nil, errors.New("the module has no function names (no \"name\" section)")
	}
	return w, nil
}

// reader reads LEB128 numbers and names from a wasm binary; the first error sticks.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.err = errors.New("unexpected end")
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *reader) uleb() uint64 {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		c := r.byte()
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	if r.err == nil {
		r.err = errors.New("LEB128 number too long")
	}
	return 0
}

func (r *reader) name() string {
	n := int(r.uleb())
	if r.err != nil || r.off+n > len(r.b) {
		if r.err == nil {
			r.err = errors.New("name runs past its section")
		}
		return ""
	}
	s := string(r.b[r.off : r.off+n])
	r.off += n
	return s
}

func (r *reader) limits() {
	flags := r.byte()
	r.uleb()
	if flags&1 != 0 {
		r.uleb()
	}
}
