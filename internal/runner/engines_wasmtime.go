//go:build wasmtime

package runner

// The wasmtime engine needs cgo and wasmtime's C library: it is linked only into binaries
// built with -tags wasmtime (see package internal/engine/wasmtime).
import _ "github.com/wasmgap/wasmgap/internal/engine/wasmtime"
