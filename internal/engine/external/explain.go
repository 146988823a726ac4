package external

import (
	"context"
	"path/filepath"
)

// CBinary builds the c engine's driver (gcc -O2) if the cache does not hold it yet and
// returns the path of its executable, whose symbol table locates each kernel's machine
// code (package explain), and done, to call once the file has been read (it removes a
// temporary build when the user has no cache directory). A missing gcc wraps
// ErrNotInstalled.
func CBinary(ctx context.Context, opts Options) (path string, done func(), err error) {
	b, err := buildC(ctx, C, opts)
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(b.Dir, "kernels"), b.Done, nil
}

// NodeWasmFlags returns the V8 flags that select the named node-wasm engine's tier
// (node-wasm, node-wasm-opt, node-wasm-liftoff, node-wasm-turbofan), and false for another
// name.
func NodeWasmFlags(name string) ([]string, bool) {
	flags, ok := wasmTiers[name]
	return flags, ok
}

// Source returns the embedded source of a driver, by its path under this package
// ("lua/kernels.lua"), so that a reader of a runtime's report can find the kernels' lines.
func Source(path string) ([]byte, error) {
	return sources.ReadFile(path)
}

// JavaClasses builds the java engines' classes (javac) if the cache does not hold them yet
// and returns their directory, where javap reads the bytecode HotSpot's interpreter runs
// (package explain), and done, to call once they have been read. A missing javac wraps
// ErrNotInstalled.
func JavaClasses(ctx context.Context, opts Options) (dir string, done func(), err error) {
	b, err := buildJava(ctx, opts)
	if err != nil {
		return "", nil, err
	}
	return b.Dir, b.Done, nil
}
