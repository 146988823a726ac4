package kernels

import (
	"strings"
	"testing"
)

// Every kernel returns its expected result at small and edge arguments, and at the
// articles' sizes for the cheap ones.
func TestKernelsMatchExpected(t *testing.T) {
	cases := map[string][][]int{
		"fib_it":    {{0}, {1}, {2}, {3}, {10}, {40}, {92}},
		"fib_rec":   {{0}, {1}, {2}, {3}, {10}, {25}},
		"ack_while": {{0, 0}, {0, 7}, {1, 5}, {2, 4}, {3, 0}, {3, 3}, {3, 6}},
		"ack":       {{0, 0}, {0, 7}, {1, 5}, {2, 4}, {3, 0}, {3, 3}, {3, 6}},
		"test1":     {{1, 1}, {20_001, 1}, {20_500, 1_000}, {3_000, 200}},
		"test1b":    {{1, 1}, {20_001, 1}, {20_500, 1_000}, {3_000, 200}},
		"test2":     {{1, 1}, {20_001, 1}, {20_500, 1_000}},
		"test3":     {{1, 1}, {20_001, 1}, {20_500, 1_000}},
		"test4":     {{1, 1}, {20_001, 1}, {20_500, 1_000}},
		"test5":     {{1, 1}, {20_001, 1}, {20_500, 1_000}},
		"test6":     {{1, 1}, {20_001, 1}, {20_500, 1_000}},
		"test7":     {{1}, {2}, {1_000}, {1_000_000}},
		"test8":     {{1}, {2}, {1_000}, {1_000_000}},
		"test8b":    {{1}, {2}, {1_000}, {1_000_000}},
		"host_call": {{}},
	}
	for _, k := range Every() {
		args, ok := cases[k.Name]
		if !ok {
			t.Errorf("%s: no test cases", k.Name)
			continue
		}
		for _, a := range args {
			if err := k.Check(a); err != nil {
				t.Errorf("%s: %v", k.Label(a), err)
				continue
			}
			if got, want := k.Call(a), k.Expected(a); got != want {
				t.Errorf("%s = %d, want %d", k.Label(a), got, want)
			}
		}
	}
}

// The expected values agree with the articles' well-known figures.
func TestExpectedKnownValues(t *testing.T) {
	for _, c := range []struct {
		kernel string
		args   []int
		want   int64
	}{
		{"fib_it", []int{40}, 102_334_155},
		{"fib_rec", []int{40}, 102_334_155},
		{"fib_it", []int{92}, 7_540_113_804_746_346_429},
		{"ack", []int{3, 10}, 8_189},
		{"ack_while", []int{3, 10}, 8_189},
		// 1,000 shared values 40000, 40002, … 41998.
		{"test1", []int{50_000, 1_000}, 40_999_000},
		{"test8b", []int{1_000_000}, 1_000_000_000_000},
	} {
		k, err := Lookup(c.kernel)
		if err != nil {
			t.Fatal(err)
		}
		if got := k.Expected(c.args); got != c.want {
			t.Errorf("expected %s = %d, want %d", k.Label(c.args), got, c.want)
		}
	}
}

// The catalogue lists the host-call kernel after the articles' kernels: it takes nothing,
// returns NopValue, and only it is marked HostCall.
func TestHostCallInCatalogue(t *testing.T) {
	k, err := Lookup("host_call")
	if err != nil {
		t.Fatal(err)
	}
	if !k.HostCall || k.Export != "nop" || len(k.Params) != 0 || k.Expected(nil) != NopValue || k.Check(nil) != nil {
		t.Errorf("host_call = %+v, want the HostCall kernel of export nop, no parameters, value %d", k, NopValue)
	}
	if got := k.Label(nil); got != "host_call()" {
		t.Errorf("Label = %q", got)
	}
	every := Every()
	if len(every) != len(All())+1 || every[len(every)-1] != k {
		t.Errorf("Every() does not end with host_call after All()")
	}
	for _, k := range All() {
		if k.HostCall {
			t.Errorf("%s is marked HostCall: All() is the kernels every engine runs", k.Name)
		}
	}
}

func TestArgsAndErrors(t *testing.T) {
	k, _ := Lookup("ack")
	args, err := k.Args(map[string]int{"m": 5})
	if err != nil || args[0] != 3 || args[1] != 5 {
		t.Fatalf("Args(m=5) = %v, %v; want [3 5]", args, err)
	}
	for _, c := range []struct {
		named map[string]int
		want  string
	}{
		{map[string]int{"n": 4}, "n = 4 is out of range: allowed 0 to 3"},
		{map[string]int{"m": -1}, "m = -1 is out of range: allowed 0 to 20"},
		{map[string]int{"x": 1}, "ack has no parameter x: its parameters are n, m"},
	} {
		if _, err := k.Args(c.named); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Args(%v) error = %v, want it to contain %q", c.named, err, c.want)
		}
	}
	if err := k.Check([]int{1}); err == nil || !strings.Contains(err.Error(), "takes 2 arguments (n, m), got 1") {
		t.Errorf("Check([1]) = %v", err)
	}
	if _, err := Lookup("fib"); err == nil || !strings.Contains(err.Error(), "valid kernels are fib_it, fib_rec") {
		t.Errorf("Lookup(fib) = %v", err)
	}
}

func TestSourceImportsNothing(t *testing.T) {
	for _, name := range SourceFiles {
		b, err := Source.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "\nimport") {
			t.Errorf("%s imports packages: the kernels must run from source in yaegi and compile to wasm alone", name)
		}
	}
}

func BenchmarkKernels(b *testing.B) {
	for _, k := range All() {
		args := k.Defaults()
		if k.Name == "ack" || k.Name == "ack_while" {
			args = []int{3, 7}
		}
		if k.Name == "fib_rec" {
			args = []int{30}
		}
		b.Run(k.Label(args), func(b *testing.B) {
			for b.Loop() {
				k.Call(args)
			}
		})
	}
}
