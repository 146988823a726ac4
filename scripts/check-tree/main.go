// Command check-tree fails when the repository tracks a file it should not: a file over
// the size limit (1 MB) or an executable binary (ELF, Mach-O, PE or a wasm module), which
// belong in the ignored build outputs (bin/, wasm/dist/, web/dist/), never in a commit.
// The named exceptions (exceptions) are the built files the repository commits on purpose,
// each with a size limit of its own.
//
// It reads the list of tracked files from `git ls-files` and each file as it is in the
// working tree. `go tool task lint` runs it, and so does CI.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// maxFileBytes is the largest file the repository may track.
const maxFileBytes = 1 << 20

// exceptions are the tracked files allowed to be large or binary, each with why and its
// own size limit.
var exceptions = map[string]struct {
	why      string
	maxBytes int64
}{
	// About 2.3 MB. CI checks that it is what wasm/module builds to (go run ./build
	// -check-wasm, in .ci/run).
	"wasm/kernels.wasm": {"kernels.wasm, committed so that a Go program depending on the module runs it with no build step (package wasm)", 4 << 20},
}

// magics are the first bytes of the executable formats a commit must not carry.
var magics = []struct {
	name  string
	magic []byte
}{
	{"ELF executable", []byte("\x7fELF")},
	{"Mach-O executable", []byte{0xcf, 0xfa, 0xed, 0xfe}},
	{"Mach-O executable", []byte{0xce, 0xfa, 0xed, 0xfe}},
	{"Mach-O universal binary", []byte{0xca, 0xfe, 0xba, 0xbe}},
	{"PE executable", []byte("MZ")},
	{"WebAssembly module", []byte("\x00asm")},
}

func main() {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "check-tree: git ls-files: %v\n", err)
		os.Exit(2)
	}
	var problems []string
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		problem, err := checkFile(name)
		if err != nil {
			fmt.Fprintf(os.Stderr, "check-tree: %v\n", err)
			os.Exit(2)
		}
		if problem != "" {
			problems = append(problems, problem)
		}
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "check-tree: %d tracked file(s) must not be committed:\n", len(problems))
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "  "+p)
		}
		fmt.Fprintln(os.Stderr, "build outputs go to bin/, wasm/dist/ or web/dist/ (ignored); remove these with git rm --cached")
		os.Exit(1)
	}
}

// checkFile says what is wrong with the tracked file name, or "" when nothing is. A
// tracked file deleted from the working tree is not a problem of this check.
func checkFile(name string) (string, error) {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", nil
	}
	if ex, ok := exceptions[name]; ok {
		if info.Size() > ex.maxBytes {
			return fmt.Sprintf("%s: %d bytes, over its own limit of %d (%s)", name, info.Size(), ex.maxBytes, ex.why), nil
		}
		return "", nil
	}
	if info.Size() > maxFileBytes {
		return fmt.Sprintf("%s: %d bytes, over the limit of %d", name, info.Size(), maxFileBytes), nil
	}
	head := make([]byte, 4)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if kind := binaryKind(head[:n]); kind != "" {
		return fmt.Sprintf("%s: %s", name, kind), nil
	}
	return "", nil
}

// binaryKind names the executable format head starts with, or "" for none.
func binaryKind(head []byte) string {
	for _, m := range magics {
		if bytes.HasPrefix(head, m.magic) {
			return m.name
		}
	}
	return ""
}
