package gccgo

import (
	"context"
	"path/filepath"
)

// Binary builds the driver (gccgo -O2) if the cache does not hold it yet and returns the
// path of its executable, whose symbol table locates each kernel's machine code (package
// explain: the kernels are functions of package main there, main.FibRec), and done, to
// call once the file has been read (it removes a temporary build when the user has no
// cache directory). A missing gccgo wraps driver.ErrNotInstalled.
func Binary(ctx context.Context, opts Options) (path string, done func(), err error) {
	b, err := build(ctx, opts)
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(b.Dir, "driver"), b.Done, nil
}
