package explain

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"runtime"
	"sort"
	"strings"

	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/x86/x86asm"
)

// Code is a function's machine code as a tier made it: its bytes, the address they run at,
// and what the tier says about its calls, so that Disassemble can mark them.
type Code struct {
	// Bytes are the function's instructions, from its entry.
	Bytes []byte
	// Addr is the address of Bytes[0] in the process that ran it (0 when unknown: the
	// offsets alone are then meaningful).
	Addr uint64
	// Arch is "amd64" or "arm64"; "" means the machine this program runs on.
	Arch string
	// Self reports whether a call at offset off (from Addr) with target target (an
	// absolute address, 0 for an indirect call) calls the function itself; nil means a
	// call whose target is Addr.
	Self func(off int, target uint64) bool
	// Notes holds what the tier said about an instruction, by offset (V8's "(jump
	// table)", HotSpot's "invokestatic fibRec"): shown beside the decoded text.
	Notes map[int]string
	// Symbol names the function at an address (a call's target), "" when unknown.
	Symbol func(addr uint64) string

	pie bool // the address is the file's, to be moved by the load base
}

// jumps are x86's branch instructions: a back edge is one whose target is earlier in
// the function.
var x86Jumps = map[x86asm.Op]bool{
	x86asm.JMP: true, x86asm.JA: true, x86asm.JAE: true, x86asm.JB: true, x86asm.JBE: true,
	x86asm.JCXZ: true, x86asm.JE: true, x86asm.JECXZ: true, x86asm.JG: true, x86asm.JGE: true,
	x86asm.JL: true, x86asm.JLE: true, x86asm.JNE: true, x86asm.JNO: true, x86asm.JNP: true,
	x86asm.JNS: true, x86asm.JO: true, x86asm.JP: true, x86asm.JRCXZ: true, x86asm.JS: true,
	x86asm.LOOP: true, x86asm.LOOPE: true, x86asm.LOOPNE: true,
}

// Disassemble decodes c with golang.org/x/arch (the one disassembler of every tier, so that
// counts compare), marks its calls (the recursive ones apart), its branches' back edges and
// the loop heads they return to, and returns the lines with the instruction count.
// Undecodable bytes (a jump table, a constant pool) become one "(bad)" line each.
func Disassemble(c Code) ([]Line, error) {
	arch := c.Arch
	if arch == "" {
		arch = runtime.GOARCH
	}
	self := c.Self
	if self == nil {
		self = func(_ int, target uint64) bool { return target != 0 && target == c.Addr }
	}
	var lines []Line
	switch arch {
	case "amd64":
		lines = decodeX86(c.Bytes, c.Addr)
	case "arm64":
		lines = decodeARM64(c.Bytes, c.Addr)
	default:
		return nil, fmt.Errorf("disassemble: no decoder for %s: amd64 and arm64 are decoded", arch)
	}
	heads := map[int]bool{}
	for i := range lines {
		l := &lines[i]
		if l.Call {
			var target uint64
			if l.Target >= 0 {
				target = c.Addr + uint64(l.Target)
			} else if l.abs != 0 {
				target = l.abs
			}
			l.Recursive = self(l.Offset, target)
		}
		if l.jump && l.Target >= 0 && l.Target <= l.Offset && l.Target < len(c.Bytes) {
			l.BackEdge = true
			heads[l.Target] = true
		}
		if n, ok := c.Notes[l.Offset]; ok {
			l.Note = n
		} else if l.Call && l.abs != 0 && c.Symbol != nil && !l.Recursive {
			if name := c.Symbol(l.abs); name != "" {
				l.Note = "→ " + name
			}
		}
	}
	for i := range lines {
		if heads[lines[i].Offset] {
			lines[i].LoopHead = true
		}
	}
	return lines, nil
}

func decodeX86(code []byte, addr uint64) []Line {
	var lines []Line
	// A jump table in the code (wazero's br_table: lea r, [rip+d]; add r, [r+8*i]; jmp r)
	// is data: its 8-byte entries, offsets from the table, are listed as such.
	table, tableReg := -1, x86asm.Reg(0)
	for off := 0; off < len(code); {
		if off == table {
			for off+8 <= len(code) {
				v := int64(binary.LittleEndian.Uint64(code[off:]))
				if v <= 0 || v >= int64(len(code)-table) {
					break
				}
				lines = append(lines, Line{Offset: off, Hex: hex.EncodeToString(code[off : off+8]),
					Text: fmt.Sprintf(".quad %#x", v), Note: fmt.Sprintf("jump table entry: +%#x", int64(table)+v), Target: table + int(v), Data: true})
				off += 8
			}
			table = -1
			continue
		}
		inst, err := x86asm.Decode(code[off:], 64)
		if err != nil || inst.Len == 0 {
			lines = append(lines, Line{Offset: off, Hex: hex.EncodeToString(code[off : off+1]), Text: "(bad)", Target: -1})
			off++
			continue
		}
		pc := addr + uint64(off)
		l := Line{Offset: off, Hex: hex.EncodeToString(code[off : off+inst.Len]), Target: -1}
		l.Text = strings.ToLower(x86asm.IntelSyntax(inst, pc, nil))
		if inst.Op == x86asm.LEA {
			if m, ok := inst.Args[1].(x86asm.Mem); ok && m.Base == x86asm.RIP {
				if r, ok := inst.Args[0].(x86asm.Reg); ok {
					table, tableReg = off+inst.Len+int(m.Disp), r
				}
			}
		}
		if inst.Op == x86asm.JMP {
			if r, ok := inst.Args[0].(x86asm.Reg); !ok || r != tableReg || table <= off {
				table = -1
			}
		}
		rel, isRel := inst.Args[0].(x86asm.Rel)
		switch {
		case inst.Op == x86asm.CALL:
			l.Call = true
			if isRel {
				l.abs = pc + uint64(inst.Len) + uint64(int64(rel))
				l.Target = relTarget(off, inst.Len, int64(rel), len(code))
			}
		case x86Jumps[inst.Op]:
			l.jump = true
			if isRel {
				l.abs = pc + uint64(inst.Len) + uint64(int64(rel))
				l.Target = relTarget(off, inst.Len, int64(rel), len(code))
			}
		}
		lines = append(lines, l)
		off += inst.Len
	}
	return lines
}

// relTarget is the offset a relative branch at off goes to, or -1 outside the function
// (a call to another function keeps its absolute target apart).
func relTarget(off, n int, rel int64, size int) int {
	t := int64(off) + int64(n) + rel
	if t < 0 || t >= int64(size) {
		return -1
	}
	return int(t)
}

func decodeARM64(code []byte, addr uint64) []Line {
	var lines []Line
	for off := 0; off+4 <= len(code); off += 4 {
		l := Line{Offset: off, Hex: hex.EncodeToString(code[off : off+4]), Target: -1}
		inst, err := arm64asm.Decode(code[off:])
		if err != nil {
			l.Text = "(bad)"
			lines = append(lines, l)
			continue
		}
		l.Text = strings.ToLower(arm64asm.GNUSyntax(inst))
		var rel int64
		var isRel bool
		for _, a := range inst.Args {
			if pcr, ok := a.(arm64asm.PCRel); ok {
				rel, isRel = int64(pcr), true
			}
		}
		switch inst.Op {
		case arm64asm.BL, arm64asm.BLR:
			l.Call = true
			if isRel {
				l.abs = addr + uint64(int64(off)+rel)
				l.Target = relTarget(off, 0, rel, len(code))
			}
		case arm64asm.B, arm64asm.CBZ, arm64asm.CBNZ, arm64asm.TBZ, arm64asm.TBNZ:
			l.jump = true
			if isRel {
				l.Target = relTarget(off, 0, rel, len(code))
			}
		}
		lines = append(lines, l)
	}
	return lines
}

// summarize fills a listing's counts from its lines.
func summarize(l *Listing) {
	l.Instructions, l.Calls, l.RecursiveCalls, l.BackEdges = 0, 0, 0, 0
	for _, ln := range l.Lines {
		if ln.Data {
			continue
		}
		l.Instructions++
		if ln.Call {
			l.Calls++
		}
		if ln.Recursive {
			l.RecursiveCalls++
		}
		if ln.BackEdge {
			l.BackEdges++
		}
	}
}

// machineListing decodes c into a listing of tier t.
func machineListing(engineName, tier, function, from string, c Code) (Listing, error) {
	lines, err := Disassemble(c)
	if err != nil {
		return Listing{}, err
	}
	arch := c.Arch
	if arch == "" {
		arch = runtime.GOARCH
	}
	l := Listing{Engine: engineName, Tier: tier, Kind: KindMachine, Function: function, From: from,
		Arch: arch, Addr: c.Addr, Bytes: len(c.Bytes), Lines: lines}
	summarize(&l)
	return l, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}
