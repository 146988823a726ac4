package explain

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/wasmgap/wasmgap/internal/engine/external"
)

// luaTraceHook is run by luajit before the driver (-e): it writes each trace's machine
// code, as jit.util.tracemc gives it, with where the trace started and how it links, to
// the file named by WASMGAP_TRACE_FILE, one line per trace:
// "<trace> <start loc> <link type> <link> <address> <loop offset> <hex bytes>".
const luaTraceHook = `local ju = require("jit.util")
local out = assert(io.open(os.getenv("WASMGAP_TRACE_FILE"), "w"))
local starts = {}
jit.attach(function(what, tr, func)
  if what == "start" then
    starts[tr] = ju.funcinfo(func).loc or "?"
  elseif what == "stop" then
    local mc, addr, loop = ju.tracemc(tr)
    local info = ju.traceinfo(tr)
    if mc and info then
      out:write(string.format("%d %s %s %d %x %d %s\n", tr, starts[tr] or "?", info.linktype, info.link,
        addr, loop or -1, (mc:gsub(".", function(c) return string.format("%02x", c:byte()) end))))
      out:flush()
    end
  end
end, "trace")`

// explainLuaJIT lists the traces LuaJIT compiled from the kernel's function during the
// luajit engine's warm-up, from the machine code jit.util.tracemc reports (the bytes -jdump
// disassembles), decoded by x86asm. A trace that links to itself by recursion (LuaJIT's
// up- and down-recursion) has its recursive call turned into that jump, marked as such.
func explainLuaJIT(ctx context.Context, r request) ([]Listing, error) {
	fnLine, err := luaFunctionLine(r.k.Name)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "wasmgap-explain-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "traces")
	env := append(os.Environ(), "WASMGAP_TRACE_FILE="+file)
	prof, _, err := warmDriver(ctx, r, external.NewEngine(r.engine, external.Options{RuntimeArgs: []string{"-e", luaTraceHook}, Env: env}))
	if err != nil {
		return nil, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("LuaJIT compiled no trace in the warm-up: %w", err)
	}
	defer f.Close()
	var ls []Listing
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	loc := ":" + strconv.Itoa(fnLine)
	for sc.Scan() {
		fld := strings.Fields(sc.Text())
		if len(fld) != 7 || !strings.HasSuffix(fld[1], loc) {
			continue
		}
		if seen[fld[0]] {
			// LuaJIT freed that trace and reused its number: the newer one replaces it.
			ls = slices.DeleteFunc(ls, func(l Listing) bool { return strings.HasPrefix(l.Tier, "LuaJIT trace "+fld[0]+" ") })
		}
		seen[fld[0]] = true
		addr, _ := strconv.ParseUint(fld[4], 16, 64)
		b, err := hex.DecodeString(fld[6])
		if err != nil {
			continue
		}
		linkType := fld[2]
		selfLink := fld[3] == fld[0]
		l, err := machineListing(r.engine, fmt.Sprintf("LuaJIT trace %s (%s)", fld[0], linkType),
			r.k.Name+" at kernels.lua"+loc, "jit.util.tracemc after the luajit engine's warm-up", Code{Bytes: b, Addr: addr})
		if err != nil {
			return nil, err
		}
		if selfLink && strings.Contains(linkType, "recursion") {
			// The trace's last jump goes back to its own start: the recursive call.
			for i := len(l.Lines) - 1; i >= 0; i-- {
				ln := &l.Lines[i]
				if ln.BackEdge || (ln.jump && strings.HasPrefix(ln.Text, "jmp")) {
					ln.Recursive, ln.Call = true, true
					ln.Note = "the recursive call: LuaJIT's " + linkType + " links the trace to itself"
					break
				}
			}
			summarize(&l)
		}
		ls = append(ls, l)
	}
	// The traces that recurse first: they are where a recursive kernel's time goes.
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].RecursiveCalls > 0 && ls[j].RecursiveCalls == 0 })
	if len(ls) == 0 {
		return nil, fmt.Errorf("LuaJIT compiled no trace that starts in %s (kernels.lua%s) in the warm-up", r.k.Name, loc)
	}
	prof.apply(ls)
	return ls, nil
}
