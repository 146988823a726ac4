package explain

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/internal/engine/external"
)

// noMachineCode is the note every interpreter's listing carries: why there is no machine
// code of the kernel to show, and what the listing is instead.
func noMachineCode(runtime, what string) string {
	return runtime + " has no machine code of the kernel: it interprets " + what +
		", one dispatch of its interpreter loop each (the loop's machine code is the same for every program); " +
		"the dispatches, not the kernel's arithmetic, are most of its time"
}

// bytecodeListing is an interpreter's instructions as a listing: loop heads marked where
// back edges go, counts summed.
func bytecodeListing(engineName, tier, function, from string, lines []Line) Listing {
	markLoopHeads(lines)
	l := Listing{Engine: engineName, Tier: tier, Kind: KindBytecode, Function: function, From: from, Lines: lines}
	summarize(&l)
	return l
}

// driverSource writes an embedded driver source (external.Source) into a new temporary
// directory and returns its path and the directory's removal.
func driverSource(path string) (file string, cleanup func(), err error) {
	src, err := external.Source(path)
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "wasmgap-explain-")
	if err != nil {
		return "", nil, err
	}
	file = filepath.Join(dir, filepath.Base(path))
	if err := os.WriteFile(file, src, 0o600); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return file, func() { os.RemoveAll(dir) }, nil
}

// runTool runs an installed program for at most a minute and returns its stdout and
// stderr; a missing program is a refusal naming its package.
func runTool(ctx context.Context, program, hint string, args ...string) (stdout, stderr []byte, err error) {
	path, err := exec.LookPath(program)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %w (%s)", program, errNoTool, hint)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	stdout, stderr, err = run(childproc.Command(ctx, path, args...))
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s%s: %w", program, strings.Join(args, " "), timedOut(ctx), err)
	}
	return stdout, stderr, nil
}

// ---- PHP without JIT ----

var phpOpLine = regexp.MustCompile(`^(\d{4}) (.*)$`)

// parsePHPOpcodes reads the opcodes opcache.opt_debug_level printed for function fn: a
// block "fn:" of lines "0004 INIT_FCALL_BY_NAME 1 string("fib_rec")", up to a blank line.
func parsePHPOpcodes(out []byte, fn string) []Line {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	in := false
	var lines []Line
	var pending []string // the functions of the calls under way, INIT_FCALL to DO_FCALL
	for sc.Scan() {
		line := sc.Text()
		if !in {
			in = line == fn+":"
			continue
		}
		if strings.TrimSpace(line) == "" {
			if len(lines) > 0 {
				break
			}
			continue
		}
		m := phpOpLine.FindStringSubmatch(line)
		if m == nil {
			if len(lines) > 0 && !strings.HasPrefix(line, " ") {
				break // LIVE RANGES: and the like
			}
			continue
		}
		off, _ := strconv.Atoi(m[1])
		f := strings.Fields(m[2])
		op := f[0]
		if len(f) > 2 && f[1] == "=" {
			op = f[2]
		}
		ln := Line{Offset: off, Text: m[2], Target: -1}
		switch {
		case strings.HasPrefix(op, "INIT_") && strings.Contains(op, "CALL"):
			callee := ""
			if i := strings.Index(m[2], `string("`); i >= 0 {
				callee, _, _ = strings.Cut(m[2][i+len(`string("`):], `"`)
			}
			pending = append(pending, callee)
		case strings.HasPrefix(op, "DO_") && strings.Contains(op, "CALL"):
			ln.Call = true
			if n := len(pending); n > 0 {
				ln.Recursive = pending[n-1] == fn
				pending = pending[:n-1]
			}
		case strings.HasPrefix(op, "JMP") || strings.HasPrefix(op, "FE_") || op == "COALESCE":
			if t, err := strconv.Atoi(f[len(f)-1]); err == nil && len(f[len(f)-1]) == 4 {
				ln.Target = t
				ln.BackEdge = t <= off
			}
		}
		lines = append(lines, ln)
	}
	return lines
}

// explainPHP lists the opcodes the php engine (PHP without opcache) interprets for the
// kernel's function: PHP's compiler's output, printed by opcache.opt_debug_level before
// its optimiser (so as the plain interpreter gets it).
func explainPHP(ctx context.Context, r request) ([]Listing, error) {
	file, cleanup, err := driverSource("php/kernels.php")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	_, stderr, err := runTool(ctx, "php", "apt-get install php-cli php-opcache",
		"-d", "opcache.enable_cli=1", "-d", "opcache.jit=0", "-d", "opcache.opt_debug_level=0x10000",
		// opcache leaves alone a file changed in the last 2 s (file_update_protection): this one was just written.
		"-d", "opcache.file_update_protection=0",
		"-r", "opcache_compile_file($argv[1]);", file)
	if err != nil {
		return nil, err
	}
	lines := parsePHPOpcodes(stderr, r.k.Name)
	if len(lines) == 0 {
		return nil, fmt.Errorf("PHP printed no opcodes of %s (opcache.opt_debug_level needs opcache)", r.k.Name)
	}
	l := bytecodeListing(r.engine, "PHP opcodes (Zend VM)", r.k.Name+" (kernels.php)",
		"opcache.opt_debug_level=0x10000: PHP's compiler's opcodes, before opcache's optimiser", lines)
	l.Notes = append(l.Notes, noMachineCode("PHP without opcache", fmt.Sprintf("these %d opcodes", l.Instructions)),
		"the opcodes do not change as PHP runs them: the warm-up changes nothing here")
	return []Listing{l}, nil
}

// ---- Lua 5.4 and LuaJIT's interpreter ----

var (
	// luac -l: "\t6\t[44]\tADDI     \t2 0 -1" and a comment after ";".
	luacLine = regexp.MustCompile(`^\t(\d+)\t\[(\d+|-)\]\t(\S+)\s*\t?([^;]*)(?:;\s*(.*))?$`)
	// luajit -bl: "0006 => UGET     1   0      ; fib_rec"
	luajitLine = regexp.MustCompile(`^(\d{4}) (=>|  ) (\S+)\s*([^;]*)(?:;\s*(.*))?$`)
	luaToPC    = regexp.MustCompile(`(?:^|\s)to (\d+)$`)
	luaArrowPC = regexp.MustCompile(`=> (\d{4})`)
)

// luaFunctionLines reads the listing of the function defined at line fnLine from luac -l
// (Lua 5.4) or luajit -bl, marking its calls (the recursive ones: a call of the register
// the function itself was loaded into), and its back edges.
func luaFunctionLines(out []byte, fn string, fnLine int, luajit bool) []Line {
	header := fmt.Sprintf(":%d,", fnLine) // luac: "function <kernels.lua:42,45>"
	if luajit {
		header = fmt.Sprintf(":%d-", fnLine) // luajit: "-- BYTECODE -- kernels.lua:42-45"
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	in := false
	var lines []Line
	reg := map[string]string{} // the function each register holds: a call is of a register
	for sc.Scan() {
		line := sc.Text()
		if !in {
			in = (strings.HasPrefix(line, "function <") || strings.HasPrefix(line, "-- BYTECODE --")) && strings.Contains(line, header)
			continue
		}
		// Both listings' patterns have the same groups: pc, target mark or line, op,
		// operands, comment.
		pattern := luacLine
		if luajit {
			pattern = luajitLine
		}
		m := pattern.FindStringSubmatch(line)
		if m == nil {
			if len(lines) > 0 {
				break
			}
			continue
		}
		pc, _ := strconv.Atoi(m[1])
		op, operands, comment := m[3], strings.TrimSpace(m[4]), strings.TrimSpace(m[5])
		text := op + " " + operands
		if comment != "" {
			text += " ; " + comment
		}
		ln := Line{Offset: pc, Text: strings.TrimSpace(text), Target: -1}
		a := ""
		if f := strings.Fields(operands); len(f) > 0 {
			a = f[0]
		}
		switch {
		case op == "GETUPVAL" || op == "UGET" || op == "GGET" || op == "GETTABUP":
			reg[a] = comment
			if op == "GETTABUP" {
				// "GETTABUP 1 0 0 ; _ENV "fib_rec""
				reg[a] = strings.Trim(strings.TrimPrefix(comment, "_ENV "), `"`)
			}
		case strings.HasPrefix(op, "CALL") || op == "TAILCALL":
			ln.Call = true
			ln.Recursive = reg[a] == fn
		}
		if m := luaToPC.FindStringSubmatch(comment); m != nil && !luajit {
			ln.Target, _ = strconv.Atoi(m[1])
		}
		if m := luaArrowPC.FindStringSubmatch(operands); m != nil && luajit {
			ln.Target, _ = strconv.Atoi(m[1])
		}
		if ln.Target >= 0 && ln.Target <= pc {
			ln.BackEdge = true
		}
		lines = append(lines, ln)
	}
	return lines
}

// luaFunctionLine is the line of kernels.lua where the kernel's function is defined.
func luaFunctionLine(fn string) (int, error) {
	src, err := external.Source("lua/kernels.lua")
	if err != nil {
		return 0, err
	}
	for i, l := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(l, "local function "+fn+"(") {
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("kernels.lua has no function %s", fn)
}

// explainLuaBytecode lists the bytecode the lua engine (Lua 5.4: luac5.4 -l) or the
// luajit-interp engine (LuaJIT with its JIT off: luajit -bl) interprets for the kernel.
func explainLuaBytecode(ctx context.Context, r request) ([]Listing, error) {
	fnLine, err := luaFunctionLine(r.k.Name)
	if err != nil {
		return nil, err
	}
	file, cleanup, err := driverSource("lua/kernels.lua")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	luajit := r.engine == "luajit-interp"
	var out []byte
	runtime, tier, from := "Lua 5.4", "Lua 5.4 bytecode", "luac5.4 -l -p kernels.lua"
	if luajit {
		runtime, tier, from = "LuaJIT with its JIT off (-joff)", "LuaJIT bytecode", "luajit -bl kernels.lua"
		out, _, err = runTool(ctx, "luajit", "apt-get install luajit", "-bl", file)
	} else {
		out, _, err = runTool(ctx, "luac5.4", "apt-get install lua5.4", "-l", "-p", file)
	}
	if err != nil {
		return nil, err
	}
	lines := luaFunctionLines(out, r.k.Name, fnLine, luajit)
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s listed no function at kernels.lua:%d", from, fnLine)
	}
	l := bytecodeListing(r.engine, tier, fmt.Sprintf("%s (kernels.lua:%d)", r.k.Name, fnLine), from, lines)
	l.Bytes = 4 * l.Instructions // both VMs' instructions are 32 bits
	l.Notes = append(l.Notes, noMachineCode(runtime, fmt.Sprintf("these %d bytecode instructions", l.Instructions)),
		"the bytecode does not change as it runs: the warm-up changes nothing here")
	return []Listing{l}, nil
}

// ---- the Go interpreters ----

// explainWazeroInterpreter lists what wazero's interpreter runs for the kernel: the
// function of kernels.wasm, which it lowers to operations of its own, one for each wasm
// instruction or nearly, and interprets.
func explainWazeroInterpreter(ctx context.Context, r request) ([]Listing, error) {
	module, err := moduleBytes()
	if err != nil {
		return nil, err
	}
	l, err := hotWasmListing(ctx, module, r.k, "wasm, as wazero's interpreter runs it")
	if err != nil {
		return nil, err
	}
	l.Notes = append(l.Notes, noMachineCode("wazero's interpreter", fmt.Sprintf("these %d wasm instructions, lowered to its own operations (about one each; wazero does not print them)", l.Instructions)),
		"the operations do not change as it runs: the warm-up changes nothing here")
	return []Listing{l}, nil
}

// explainYaegi lists what yaegi runs for the kernel: the Go source, which it turns into a
// tree of Go closures, one per node, that it cannot print.
func explainYaegi(ctx context.Context, r request) ([]Listing, error) {
	ls, err := explainSource(ctx, r)
	if err != nil {
		return nil, err
	}
	ls[0].Tier = "Go source, as yaegi runs it"
	ls[0].Notes = append(ls[0].Notes, "yaegi is an interpreter: it has no machine code of the kernel. It walks a tree of Go closures built from this source, "+
		"one per node of the syntax tree, each a call through a function value; yaegi does not print the tree")
	return ls, nil
}

// ---- HotSpot's interpreter ----

// javapLine is one instruction of javap -c: "  10: invokestatic  #7   // Method fibRec:(I)J".
var javapLine = regexp.MustCompile(`^\s+(\d+): (\S+)\s*([^/]*?)\s*(?://\s*(.*))?$`)

// parseJavap reads the bytecode of method fn (its name) from javap -c -p: the block after
// its signature line "  static long fn(int);", up to a blank line.
func parseJavap(out []byte, fn string) []Line {
	sc := bufio.NewScanner(bytes.NewReader(out))
	in := false
	var lines []Line
	for sc.Scan() {
		line := sc.Text()
		if !in {
			t := strings.TrimSpace(line)
			in = strings.HasSuffix(t, ");") && strings.Contains(t, " "+fn+"(")
			continue
		}
		if strings.TrimSpace(line) == "Code:" {
			continue
		}
		m := javapLine.FindStringSubmatch(line)
		if m == nil {
			if len(lines) > 0 {
				break
			}
			continue
		}
		off, _ := strconv.Atoi(m[1])
		op, operands, comment := m[2], m[3], m[4]
		text := strings.TrimSpace(op + " " + operands)
		if comment != "" {
			text += " // " + comment
		}
		ln := Line{Offset: off, Text: text, Target: -1}
		switch {
		case strings.HasPrefix(op, "invoke"):
			ln.Call = true
			ln.Recursive = strings.HasPrefix(comment, "Method "+fn+":")
		case strings.HasPrefix(op, "if") || op == "goto" || op == "goto_w":
			if t, err := strconv.Atoi(strings.TrimSpace(operands)); err == nil {
				ln.Target, ln.BackEdge = t, t <= off
			}
		}
		lines = append(lines, ln)
	}
	return lines
}

// explainJavaInt lists the bytecode the java-int engine (HotSpot's interpreter alone,
// java -Xint) runs for the kernel's method, as javap -c prints it from the driver's classes.
func explainJavaInt(ctx context.Context, r request) ([]Listing, error) {
	dir, done, err := external.JavaClasses(ctx, external.Options{})
	if err != nil {
		return nil, err
	}
	defer done()
	out, _, err := runTool(ctx, "javap", "apt-get install openjdk-17-jdk-headless", "-c", "-p", "-cp", dir, "Kernels")
	if err != nil {
		return nil, err
	}
	fn := jsName(r.k.Func)
	lines := parseJavap(out, fn)
	if len(lines) == 0 {
		return nil, fmt.Errorf("javap printed no bytecode of Kernels.%s", fn)
	}
	l := bytecodeListing(r.engine, "JVM bytecode", "Kernels::"+fn, "javap -c of the java engines' classes", lines)
	l.Bytes = lines[len(lines)-1].Offset + 1 // at least: the last instruction's operands are not counted
	l.Notes = append(l.Notes, noMachineCode("HotSpot with -Xint", fmt.Sprintf("these %d bytecode instructions", l.Instructions)),
		"the bytecode does not change as it runs (no JIT under -Xint): the warm-up changes nothing here")
	return []Listing{l}, nil
}
