package explain

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/wasmgap/wasmgap/internal/engine/external"
)

// hotspotCode is one compilation HotSpot printed with -XX:CompileCommand=print: without
// a disassembler plugin (hsdis) it prints the raw bytes, with its relocations and debug
// information as comments at their addresses.
type hotspotCode struct {
	tier       string // "c1", "c2"
	method     string
	osr        bool   // an on-stack replacement: a loop's code entered mid-method
	start, end uint64 // main code
	mem        map[uint64]byte
	comments   map[uint64][]string
}

var (
	// "Compiled method (c2)  825  6       4       Kernels::fibRec (21 bytes)"; an on-stack
	// replacement has flags before its level and "@ bci" after: "…  10 %     4       Kernels::test1 @ 48 (…)".
	hsHeader  = regexp.MustCompile(`^Compiled method \((c1|c2)\)\s+\d+\s+\d+\s+(?:\S+\s+)*?(\S+::\S+)(\s+@\s+\d+)?`)
	hsMain    = regexp.MustCompile(`^\s*main code\s+\[0x([0-9a-f]+),0x([0-9a-f]+)\]`)
	hsLine    = regexp.MustCompile(`^\s*0x([0-9a-f]+): (.*)$`)
	hsComment = regexp.MustCompile(`^\s+;`)
)

// parseHotSpot reads HotSpot's printed compilations.
func parseHotSpot(r io.Reader) []*hotspotCode {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var out []*hotspotCode
	var cur *hotspotCode
	var lastAddr uint64
	for sc.Scan() {
		line := sc.Text()
		if m := hsHeader.FindStringSubmatch(line); m != nil {
			cur = &hotspotCode{tier: m[1], method: m[2], osr: m[3] != "", mem: map[uint64]byte{}, comments: map[uint64][]string{}}
			out = append(out, cur)
			continue
		}
		if cur == nil {
			continue
		}
		if m := hsMain.FindStringSubmatch(line); m != nil {
			cur.start, _ = strconv.ParseUint(m[1], 16, 64)
			cur.end, _ = strconv.ParseUint(m[2], 16, 64)
			continue
		}
		if m := hsLine.FindStringSubmatch(line); m != nil {
			addr, _ := strconv.ParseUint(m[1], 16, 64)
			lastAddr = addr
			body := strings.TrimSpace(m[2])
			if strings.HasPrefix(body, ";") {
				cur.comments[addr] = append(cur.comments[addr], strings.TrimSpace(strings.TrimPrefix(body, ";")))
				continue
			}
			hexs := strings.NewReplacer(" ", "", "|", "").Replace(body)
			b, err := hex.DecodeString(hexs)
			if err != nil {
				continue
			}
			for i, c := range b {
				cur.mem[addr+uint64(i)] = c
			}
			continue
		}
		if hsComment.MatchString(line) && lastAddr != 0 {
			cur.comments[lastAddr] = append(cur.comments[lastAddr], strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), ";")))
		}
	}
	return out
}

// code returns the main code's bytes, in address order.
func (h *hotspotCode) code() ([]byte, error) {
	if h.end <= h.start {
		return nil, fmt.Errorf("HotSpot printed no main code range for %s", h.method)
	}
	b := make([]byte, 0, h.end-h.start)
	for a := h.start; a < h.end; a++ {
		c, ok := h.mem[a]
		if !ok {
			break
		}
		b = append(b, c)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("HotSpot printed no bytes of %s", h.method)
	}
	return b, nil
}

// explainJava lists the kernel's method as HotSpot's C2 compiled it after the java
// engine's warm-up, and C1's code before it where C1 ran; the recursive call is the one
// HotSpot's debug information calls "invokestatic <method>".
func explainJava(ctx context.Context, r request) ([]Listing, error) {
	method := "Kernels::" + jsName(r.k.Func)
	var stderr bytes.Buffer
	flags := []string{"-XX:+UnlockDiagnosticVMOptions", "-XX:CompileCommand=print," + method}
	prof, _, err := warmDriver(ctx, r, external.NewEngine(r.engine, external.Options{RuntimeArgs: flags, Stderr: &stderr}))
	if err != nil {
		return nil, err
	}
	last := map[string]*hotspotCode{}
	for _, c := range parseHotSpot(&stderr) {
		if c.method == method {
			last[c.tier] = c
		}
	}
	if len(last) == 0 {
		return nil, fmt.Errorf("HotSpot compiled no %s in the warm-up (nothing printed)", method)
	}
	ls, err := hotspotListings(r.engine, last, method, jsName(r.k.Func))
	if err != nil {
		return nil, err
	}
	prof.apply(ls)
	return ls, nil
}

// hotspotListings decodes the last C2 and C1 compilations of method; fn is its name in
// HotSpot's debug information ("invokestatic fibRec").
func hotspotListings(engineName string, last map[string]*hotspotCode, method, fn string) ([]Listing, error) {
	callee := "invokestatic " + fn + " "
	var ls []Listing
	for _, tier := range []string{"c2", "c1"} {
		h, ok := last[tier]
		if !ok {
			continue
		}
		b, err := h.code()
		if err != nil {
			return nil, err
		}
		// Comments go to the instruction that holds their address.
		plain, err := Disassemble(Code{Bytes: b, Addr: h.start})
		if err != nil {
			return nil, err
		}
		notes := map[int]string{}
		addrs := make([]uint64, 0, len(h.comments))
		for a := range h.comments {
			addrs = append(addrs, a)
		}
		sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
		for _, a := range addrs {
			if a < h.start || a >= h.start+uint64(len(b)) {
				continue
			}
			off := int(a - h.start)
			i := sort.Search(len(plain), func(i int) bool { return plain[i].Offset > off }) - 1
			if i < 0 {
				continue
			}
			at := plain[i].Offset
			notes[at] = strings.TrimSpace(notes[at] + " " + strings.Join(h.comments[a], " "))
		}
		// A call's debug information is at its return address, inside or just after it.
		recursive := map[int]bool{}
		for i, l := range plain {
			if !l.Call {
				continue
			}
			note := notes[l.Offset]
			if i+1 < len(plain) {
				note += " " + notes[plain[i+1].Offset]
			}
			recursive[l.Offset] = strings.Contains(note, callee)
		}
		code := Code{Bytes: b, Addr: h.start, Notes: notes, Self: func(off int, _ uint64) bool { return recursive[off] }}
		name := "HotSpot " + strings.ToUpper(tier)
		if h.osr {
			name += " (on-stack replacement: the loop entered mid-call)"
		}
		l, err := machineListing(engineName, name, method,
			"java -XX:CompileCommand=print (raw bytes, no hsdis), after a warm-up", code)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
	}
	return ls, nil
}
