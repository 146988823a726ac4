package custom

import (
	"errors"
	"strings"
	"testing"
)

const sieve = `package kernel

// Primes counts the primes below n with the sieve of Eratosthenes.
func Primes(n int) int64 {
	composite := make([]bool, n)
	var count int64
	for i := 2; i < n; i++ {
		if composite[i] {
			continue
		}
		count++
		for j := i * i; j < n; j += i {
			composite[j] = true
		}
	}
	return count
}
`

func TestCheckAccepts(t *testing.T) {
	fn, err := Check([]byte(sieve))
	if err != nil {
		t.Fatal(err)
	}
	if fn.Name != "Primes" || strings.Join(fn.Params, ",") != "n" || strings.Join(fn.Types, ",") != "int" {
		t.Errorf("Check = %+v", fn)
	}
	src := "package kernel\n\nimport (\n\t\"math\"\n\t\"math/bits\"\n\t\"sort\"\n)\n\nfunc helper() {}\n\nfunc Mix(a, b int32, c int64) int64 {\n\t_ = sort.Ints\n\treturn int64(bits.OnesCount(uint(a))) + int64(b) + c + int64(math.MaxInt8)\n}\n"
	fn, err = Check([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(fn.Params, ",") != "a,b,c" || strings.Join(fn.Types, ",") != "int32,int32,int64" {
		t.Errorf("Check = %+v", fn)
	}
}

func TestCheckRefuses(t *testing.T) {
	body := "\nfunc F(n int) int64 { return int64(n) }\n"
	for _, tc := range []struct {
		name, src string
		line      int
		want      string
	}{
		{"unsafe", "package kernel\n\nimport \"unsafe\"\n" + body, 3, `import "unsafe" is not allowed`},
		{"os", "package kernel\n\nimport \"os\"\n" + body, 3, `import "os" is not allowed`},
		{"os/exec", "package kernel\n\nimport \"os/exec\"\n" + body, 3, `import "os/exec" is not allowed`},
		{"net", "package kernel\n\nimport (\n\t\"math\"\n\t\"net\"\n)\n" + body, 5, `import "net" is not allowed`},
		{"syscall", "package kernel\n\nimport \"syscall\"\n" + body, 3, `import "syscall"`},
		{"plugin", "package kernel\n\nimport \"plugin\"\n" + body, 3, `import "plugin"`},
		{"runtime", "package kernel\n\nimport \"runtime\"\n" + body, 3, `import "runtime"`},
		{"reflect", "package kernel\n\nimport \"reflect\"\n" + body, 3, `import "reflect"`},
		{"io/fs", "package kernel\n\nimport \"io/fs\"\n" + body, 3, `import "io/fs"`},
		{"module", "package kernel\n\nimport \"github.com/x/y\"\n" + body, 3, `import "github.com/x/y" is not allowed`},
		{"cgo", "package kernel\n\n// #include <stdlib.h>\nimport \"C\"\n" + body, 4, `import "C" is not allowed: cgo is off`},
		{"generate", "package kernel\n\n//go:generate rm -rf /\n" + body, 3, "directive //go:generate is not allowed"},
		{"linkname", "package kernel\n" + body + "\n//go:linkname x runtime.x\nvar x int\n", 5, "directive //go:linkname"},
		{"embed", "package kernel\n\nimport _ \"embed\"\n\n//go:embed /etc/passwd\nvar s string\n" + body, 3, `import "embed" is not allowed`},
		{"build tag", "//go:build ignore\n\npackage kernel\n" + body, 1, "directive //go:build"},
		{"go.mod", "module evil\n\ngo 1.26\n\ntoolchain go1.99.0\n", 1, "syntax error"},
		{"toolchain", "package kernel\n\ntoolchain go1.99.0\n" + body, 3, "syntax error"},
		{"package", "package main\n" + body, 1, "it must be package kernel"},
		{"none", "package kernel\n\nfunc f(n int) int64 { return 0 }\n", 1, "no exported function"},
		{"two", "package kernel\n" + body + "\nfunc G(n int) int64 { return 0 }\n", 5, "2 exported functions (F, G)"},
		{"param", "package kernel\n\nfunc F(s string) int64 { return 0 }\n", 3, "parameter type string is not allowed"},
		{"result", "package kernel\n\nfunc F(n int) int { return n }\n", 3, "F returns int: the kernel must return int64"},
		{"generic", "package kernel\n\nfunc F[T any](n int) int64 { return 0 }\n", 3, "F is generic"},
		{"syntax", "package kernel\n\nfunc F(n int) int64 {\n\treturn n +\n}\n", 5, "syntax error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check([]byte(tc.src))
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("Check = %v, want Errors", err)
			}
			for _, e := range errs {
				if strings.Contains(e.Msg, tc.want) && e.Line == tc.line {
					return
				}
			}
			t.Errorf("Check = %v, want %q at line %d", err, tc.want, tc.line)
		})
	}
}

func TestCheckSize(t *testing.T) {
	src := "package kernel\n\nfunc F(n int) int64 { return 0 }\n//" + strings.Repeat("x", 1<<20)
	_, err := Check([]byte(src))
	if err == nil || !strings.Contains(err.Error(), "at most 65536 (64 KiB) are allowed") {
		t.Errorf("Check(1 MB) = %v", err)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte(sieve))
	f.Add([]byte("package kernel\nimport \"C\"\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		fn, err := Check(src)
		if (fn == nil) == (err == nil) {
			t.Fatalf("Check = %v, %v: want exactly one", fn, err)
		}
	})
}
