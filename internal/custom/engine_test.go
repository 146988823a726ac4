package custom

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
)

// allowedUse exercises several allowed packages; every engine must compute the same.
const allowedUse = `package kernel

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strconv"
	"strings"
)

// Mixed uses the allowed packages.
func Mixed(n int, seed int64) int64 {
	xs := make([]int, n)
	for i := range xs {
		xs[i] = int((seed*int64(i+7))%1000) - 500
	}
	sort.Ints(xs)
	ys := append([]int(nil), xs...)
	sort.Sort(sort.Reverse(sort.IntSlice(ys)))
	s := strings.Repeat("ab", n%10+1) + strconv.Itoa(n)
	r := int64(len(fmt.Sprintf("%d-%s", xs[0], s)))
	r += int64(bits.OnesCount64(uint64(seed))) + int64(math.Sqrt(float64(n)))
	return r + int64(ys[0]) + int64(strings.Count(s, "a"))
}
`

func TestEnginesAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	k, err := testBuilder(t).Build(context.Background(), []byte(allowedUse))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var first int64
	for i, name := range Engines {
		e, err := NewEngine(name, k)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Load(ctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		v, err := e.Run(ctx, k.Kernel(), []int{1000, 12345})
		e.Close(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if i == 0 {
			first = v
		} else if v != first {
			t.Errorf("%s = %d, %s = %d", name, v, Engines[0], first)
		}
	}
	if _, err := NewEngine(engine.Native, k); err == nil || !strings.Contains(err.Error(), "native runs of user kernels are off") {
		t.Errorf("NewEngine(native) = %v", err)
	}
}

// TestYaegiSymbols checks that yaegi offers user code the allowed packages only, even for
// a source that did not pass Check.
func TestYaegiSymbols(t *testing.T) {
	for _, path := range []string{"os", "os/exec", "net", "syscall", "unsafe", "reflect", "runtime", "io/fs"} {
		dir := t.TempDir()
		src := "package kernel\n\nimport p " + `"` + path + `"` + "\n\nvar _ = p.ErrUnsupported\n\nfunc F(n int) int64 { return int64(n) }\n"
		if err := os.WriteFile(filepath.Join(dir, "kernel.go"), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		k := &Kernel{ID: ID([]byte(src)), Func: Func{Name: "F", Params: []string{"n"}, Types: []string{"int"}}, Dir: dir}
		e, err := NewEngine(engine.Yaegi, k)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Load(context.Background()); err == nil {
			t.Errorf("yaegi loaded a source importing %q", path)
		}
	}
	// Every allowed package is there.
	dir := t.TempDir()
	src := "package kernel\n\nimport (\n" + importAll() + ")\n\nfunc F(n int) int64 { return int64(n) }\n"
	if err := os.WriteFile(filepath.Join(dir, "kernel.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(engine.Yaegi, &Kernel{Func: Func{Name: "F", Params: []string{"n"}, Types: []string{"int"}}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Load(context.Background()); err != nil {
		t.Errorf("yaegi cannot import every allowed package: %v", err)
	}
	syms := Symbols()
	for key := range syms {
		if !strings.HasPrefix(key, "math/") && !containsPrefix(key) {
			t.Errorf("symbol table offers %s", key)
		}
	}
	if _, ok := syms["math/math"]; !ok {
		t.Error("symbol table lacks math")
	}
}

func containsPrefix(key string) bool {
	for _, p := range Allowed {
		if filepath.Dir(key) == p {
			return true
		}
	}
	return false
}
