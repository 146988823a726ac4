package custom

import (
	"errors"
	"strings"
	"testing"
)

// raceKernel tears an interface value with a racing goroutine: i.V() on a *ptrBox with the
// data word of an *intBox writes through an integer the kernel chose (the address of
// target, from fmt's %p), so target, which the source never assigns, ends up 4919.
const raceKernel = `package kernel

import (
	"fmt"
	"strconv"
)

type setter interface{ V(v int) }

type ptrBox struct{ p *int }

type intBox struct{ n int }

func (b *ptrBox) V(v int) { *b.p = v }

func (b *intBox) V(v int) { b.n = v }

var target int

func Race(n int) int64 {
	addr, _ := strconv.ParseUint(fmt.Sprintf("%p", &target)[2:], 16, 64)
	good, evil := &ptrBox{p: new(int)}, &intBox{n: int(addr)}
	var i setter = good
	go func() {
		for {
			i = evil
			i = good
		}
	}()
	for k := 0; k < n && target == 0; k++ {
		i.V(4919)
	}
	return int64(target)
}
`

// The race kernel, and every other way found to the same write (a second goroutine, a
// channel to hand values across, the packages that reach threads, the scheduler or raw
// memory), is refused by Check, saying what and why.
func TestCheckRefusesConcurrency(t *testing.T) {
	fn := func(body string) string {
		return "package kernel\n\nfunc F(n int) int64 {\n" + body + "\n\treturn 0\n}\n"
	}
	imp := func(path, use string) string {
		return "package kernel\n\nimport \"" + path + "\"\n\nvar _ = " + use + "\n\nfunc F(n int) int64 { return 0 }\n"
	}
	for _, tc := range []struct {
		name, src, want string
	}{
		{"race kernel", raceKernel, "go statements are not allowed: a kernel runs on one goroutine"},
		{"go method value", "package kernel\n\ntype t struct{}\n\nfunc (t) m() {}\n\nfunc F(n int) int64 {\n\tgo t{}.m()\n\treturn 0\n}\n", "go statements are not allowed"},
		{"go in a closure", fn("\tf := func() { go func() {}() }\n\tf()"), "go statements are not allowed"},
		{"go builtin", fn("\ts := []int{1}\n\tgo copy(s, s)"), "go statements are not allowed"},
		{"channel", fn("\tc := make(chan int, 1)\n\t_ = c"), "channel types are not allowed"},
		{"receive-only channel", "package kernel\n\nvar c <-chan int\n\nfunc F(n int) int64 { return 0 }\n", "channel types are not allowed"},
		{"send", "package kernel\n\nfunc F(n int) int64 {\n\tvar c chan<- int\n\tc <- 1\n\treturn 0\n}\n", "channel sends are not allowed"},
		{"receive", "package kernel\n\nvar c chan int\n\nfunc F(n int) int64 { return int64(<-c) }\n", "channel receives are not allowed"},
		{"select", fn("\tselect {}"), "select statements are not allowed"},
		{"sync", imp("sync", "sync.Mutex{}"), `import "sync" is not allowed`},
		{"sync/atomic", imp("sync/atomic", "atomic.AddInt64"), `import "sync/atomic" is not allowed`},
		{"runtime", imp("runtime", "runtime.Gosched"), `import "runtime" is not allowed`},
		{"runtime/debug", imp("runtime/debug", "debug.SetGCPercent"), `import "runtime/debug" is not allowed`},
		{"unsafe", imp("unsafe", "unsafe.Pointer(nil)"), `import "unsafe" is not allowed`},
		{"reflect", imp("reflect", "reflect.NewAt"), `import "reflect" is not allowed`},
		{"time.AfterFunc", imp("time", "time.AfterFunc"), `import "time" is not allowed`},
		{"os/signal", imp("os/signal", "signal.Notify"), `import "os/signal" is not allowed`},
		{"iter.Pull", imp("iter", "iter.Pull[int]"), `import "iter" is not allowed`},
		{"net/http", imp("net/http", "http.ListenAndServe"), `import "net/http" is not allowed`},
		{"context", imp("context", "context.AfterFunc"), `import "context" is not allowed`},
		{"linkname", "package kernel\n\nimport _ \"unsafe\"\n\n//go:linkname newproc runtime.newproc\nfunc newproc()\n\nfunc F(n int) int64 { return 0 }\n", "directive //go:linkname"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check([]byte(tc.src))
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Check = %v, want Errors with %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check = %v, want %q", err, tc.want)
			}
			for _, e := range errs {
				if e.Line == 0 {
					t.Errorf("%q has no place in the source", e.Msg)
				}
			}
		})
	}
}

// Sequential code that uses what the refusals name in other senses still passes: a
// function value called in place, a type named like a channel, a range over a function.
func TestCheckAcceptsSequential(t *testing.T) {
	src := "package kernel\n\ntype chanT int\n\nfunc seq(yield func(int) bool) {\n\tfor i := 0; i < 3 && yield(i); i++ {\n\t}\n}\n\nfunc F(n int) int64 {\n\tvar s int64\n\tfor v := range seq {\n\t\ts += int64(v)\n\t}\n\tgo_ := func() int64 { return int64(chanT(n)) }\n\treturn s + go_()\n}\n"
	if _, err := Check([]byte(src)); err != nil {
		t.Errorf("Check = %v, want it accepted", err)
	}
}
