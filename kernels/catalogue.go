// Package kernels holds the source articles' kernels, written once in Go, and their
// catalogue: what each kernel is, where it comes from, its parameters with defaults and
// allowed ranges, and the result it must return.
//
// The kernel functions live in files that import nothing (recursion.go, loops.go): the
// native engine calls them, the wasm module compiles them to WebAssembly, and the yaegi
// engine interprets the very same files from source (see Source).
package kernels

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

// Source holds the kernel files that every engine runs: the yaegi engine interprets them.
//
//go:embed recursion.go loops.go
var Source embed.FS

// SourceFiles names the files of Source, in the order an interpreter should load them.
var SourceFiles = []string{"recursion.go", "loops.go"}

// The source articles, as the catalogue and the reports cite them.
const (
	ArticleRecursion = "Recursion with PHP 7, HHVM 3.8, Javascript, Java and C/C++ (Update: Go, Zephir)"
	ArticleLoops     = "For or Foreach? PHP vs. Javascript, C++, Java, HHVM (update: Go, Zephir)"
)

// Groups of kernels.
const (
	GroupRecursion = "recursion"
	GroupLoops     = "loops"
	// GroupHost holds the kernels that time the wasm module's boundary, not code.
	GroupHost = "host"
)

// Param is one integer parameter of a kernel.
type Param struct {
	Name    string `json:"name"`
	Doc     string `json:"doc"`
	Default int    `json:"default"`
	Min     int    `json:"min"`
	Max     int    `json:"max"`
}

// Kernel describes one kernel: what it is, how to call it natively, and what it returns.
type Kernel struct {
	// Name is the kernel's name as the articles and the CLI spell it: "fib_rec", "test1".
	Name string `json:"name"`
	// Export is the name of the wasm module's export that runs it: the kernel's Name, except
	// for host_call (its export is "nop"). kernels.wasm also keeps the loop tests' former
	// export names ("loop_test1") as aliases for one release (package wasm, LegacyExport).
	Export string `json:"export"`
	// Func is the name of the Go function in Source: "FibRec", "Test1".
	Func    string  `json:"func"`
	Group   string  `json:"group"`
	Article string  `json:"article"`
	Summary string  `json:"summary"`
	Params  []Param `json:"params"`
	// HostCall marks a kernel that times one call from a host into kernels.wasm (host_call:
	// its export does nothing). Only the engines that call the module's exports from a host
	// run it (engine.Info.KernelsWasm); the others have no such boundary and show the cell
	// as not applicable. An engine times it one host call per iteration, never through the
	// in-module batch export (wasm.BatchSuffix), which would time no crossing at all.
	HostCall bool `json:"host_call,omitempty"`

	// Call runs the kernel natively with arguments in the order of Params.
	Call func(args []int) int64 `json:"-"`
	// Expected computes the result independently of Call (closed form or another method).
	Expected func(args []int) int64 `json:"-"`
}

var (
	fibN = Param{Name: "n", Doc: "which Fibonacci number", Default: 40, Min: 0, Max: 92}
	ackN = Param{Name: "n", Doc: "first Ackermann argument", Default: 3, Min: 0, Max: 3}
	ackM = Param{Name: "m", Doc: "second Ackermann argument (ack(3, m) recurses about 2^(m+3) deep)", Default: 10, Min: 0, Max: 20}
	big  = Param{Name: "big", Doc: "elements of the big array (i*2 for i from 0)", Default: 50_000, Min: 1, Max: 1_000_000}
	// small's range keeps its values inside int32 for the browser's JavaScript port.
	small = Param{Name: "small", Doc: "elements of the small array (i*2 for i from 20000)", Default: 1_000, Min: 1, Max: 100_000}
	large = Param{Name: "large", Doc: "elements of the large array, incremented in place", Default: 1_000_000, Min: 1, Max: 10_000_000}
)

func pairKernel(name, fn, summary string, call func(big, small int) int64) *Kernel {
	return &Kernel{
		Name: name, Export: name, Func: fn, Group: GroupLoops, Article: ArticleLoops,
		Summary:  summary,
		Params:   []Param{big, small},
		Call:     func(a []int) int64 { return call(a[0], a[1]) },
		Expected: func(a []int) int64 { return expectedMatches(a[0], a[1]) },
	}
}

func largeKernel(name, fn, summary string, call func(large int) int64) *Kernel {
	return &Kernel{
		Name: name, Export: name, Func: fn, Group: GroupLoops, Article: ArticleLoops,
		Summary:  summary,
		Params:   []Param{large},
		Call:     func(a []int) int64 { return call(a[0]) },
		Expected: func(a []int) int64 { n := int64(a[0]); return n * n },
	}
}

var catalogue = []*Kernel{
	{
		Name: "fib_it", Export: "fib_it", Func: "FibIt", Group: GroupRecursion, Article: ArticleRecursion,
		Summary:  "Fibonacci with a loop",
		Params:   []Param{fibN},
		Call:     func(a []int) int64 { return FibIt(a[0]) },
		Expected: func(a []int) int64 { return fibDoubling(a[0]) },
	},
	{
		Name: "fib_rec", Export: "fib_rec", Func: "FibRec", Group: GroupRecursion, Article: ArticleRecursion,
		Summary: "Fibonacci by naive double recursion",
		Params:  []Param{fibN},
		Call:    func(a []int) int64 { return FibRec(a[0]) },
		Expected: func(a []int) int64 {
			if a[0] < 3 {
				return 1
			}
			return fibDoubling(a[0])
		},
	},
	{
		Name: "ack_while", Export: "ack_while", Func: "AckWhile", Group: GroupRecursion, Article: ArticleRecursion,
		Summary:  "Ackermann with the outer recursion as a loop",
		Params:   []Param{ackN, ackM},
		Call:     func(a []int) int64 { return AckWhile(a[0], a[1]) },
		Expected: func(a []int) int64 { return ackClosedForm(a[0], a[1]) },
	},
	{
		Name: "ack", Export: "ack", Func: "Ack", Group: GroupRecursion, Article: ArticleRecursion,
		Summary:  "Ackermann by double recursion",
		Params:   []Param{ackN, ackM},
		Call:     func(a []int) int64 { return Ack(a[0], a[1]) },
		Expected: func(a []int) int64 { return ackClosedForm(a[0], a[1]) },
	},
	pairKernel("test1", "Test1", "foreach big (foreach small), loose == on dynamic values", Test1),
	pairKernel("test1b", "Test1b", "foreach big (foreach small), strict === on typed values", Test1b),
	pairKernel("test2", "Test2", "foreach small (foreach big)", Test2),
	pairKernel("test3", "Test3", "foreach big (foreach small) with key lookup", Test3),
	pairKernel("test4", "Test4", "foreach small (foreach big) with key lookup", Test4),
	pairKernel("test5", "Test5", "for big (for small), count() outside the loops", Test5),
	pairKernel("test6", "Test6", "for small (for big), count() outside the loops", Test6),
	largeKernel("test7", "Test7", "foreach large by reference, $val++", Test7),
	largeKernel("test8", "Test8", "for large with count() in the condition, $array[$key]++", Test8),
	largeKernel("test8b", "Test8b", "for large with count() outside the loop", Test8b),
}

// hostCalls are the kernels that time kernels.wasm's boundary (Kernel.HostCall), listed
// after the articles' kernels.
var hostCalls = []*Kernel{
	{
		Name: "host_call", Export: "nop", Func: "Nop", Group: GroupHost,
		Summary:  "per call from the host: the module's empty export nop, one call into kernels.wasm per iteration",
		Params:   []Param{},
		HostCall: true,
		Call:     func([]int) int64 { return Nop() },
		Expected: func([]int) int64 { return NopValue },
	},
}

// All returns the articles' kernels, which every engine runs, in the articles' order. Every
// adds the kernels only wasm engines run.
func All() []*Kernel {
	return append([]*Kernel(nil), catalogue...)
}

// Every returns every kernel of the catalogue: the articles' kernels (All), then those that
// time kernels.wasm's boundary (Kernel.HostCall).
func Every() []*Kernel {
	return append(All(), hostCalls...)
}

// Names returns the names of every kernel of the catalogue, in the order of Every.
func Names() []string {
	every := Every()
	names := make([]string, len(every))
	for i, k := range every {
		names[i] = k.Name
	}
	return names
}

// Lookup returns the kernel with the given name, or an error that lists the valid names.
func Lookup(name string) (*Kernel, error) {
	for _, k := range Every() {
		if k.Name == name {
			return k, nil
		}
	}
	return nil, fmt.Errorf("unknown kernel %q: valid kernels are %s", name, strings.Join(Names(), ", "))
}

// Defaults returns the kernel's default arguments in the order of Params.
func (k *Kernel) Defaults() []int {
	args := make([]int, len(k.Params))
	for i, p := range k.Params {
		args[i] = p.Default
	}
	return args
}

// ArgError is the error of Check and Args: it says what was wrong with a kernel's
// arguments and what is allowed.
type ArgError struct {
	// Kernel is the kernel's name.
	Kernel string
	// Param names the parameter at fault; "" when the number of arguments is wrong.
	Param string
	// Msg is the whole message, kernel name included.
	Msg string
}

func (e *ArgError) Error() string { return e.Msg }

// Check is the one check of a kernel's arguments, wherever they come from (the CLI, the
// page, a test): it reports whether args fit the kernel's parameters, with an *ArgError
// naming the allowed range of the first that does not.
func (k *Kernel) Check(args []int) error {
	if len(args) != len(k.Params) {
		return &ArgError{Kernel: k.Name, Msg: fmt.Sprintf("%s takes %d arguments (%s), got %d", k.Name, len(k.Params), k.paramList(), len(args))}
	}
	for i, p := range k.Params {
		if args[i] < p.Min || args[i] > p.Max {
			return &ArgError{Kernel: k.Name, Param: p.Name,
				Msg: fmt.Sprintf("%s: %s = %d is out of range: allowed %d to %d", k.Name, p.Name, args[i], p.Min, p.Max)}
		}
	}
	return nil
}

// Args returns the kernel's arguments with the named values set and the rest at their
// defaults, checked by Check. An unknown name is an *ArgError naming it.
func (k *Kernel) Args(named map[string]int) ([]int, error) {
	args := k.Defaults()
	var unknown []string
	for name, v := range named {
		i := k.paramIndex(name)
		if i < 0 {
			unknown = append(unknown, name)
			continue
		}
		args[i] = v
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, &ArgError{Kernel: k.Name, Param: unknown[0],
			Msg: fmt.Sprintf("%s has no parameter %s: its parameters are %s", k.Name, strings.Join(unknown, ", "), k.paramList())}
	}
	return args, k.Check(args)
}

// Label renders a call as the articles write it: "fib_rec(40)", "test1(50000, 1000)".
func (k *Kernel) Label(args []int) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = fmt.Sprint(a)
	}
	return k.Name + "(" + strings.Join(parts, ", ") + ")"
}

func (k *Kernel) paramIndex(name string) int {
	for i, p := range k.Params {
		if p.Name == name {
			return i
		}
	}
	return -1
}

func (k *Kernel) paramList() string {
	names := make([]string, len(k.Params))
	for i, p := range k.Params {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}
