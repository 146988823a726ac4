//go:build wasmtime

package playground

// Built with -tags wasmtime, the test binary (and so its workers) links the wasmtime engine:
// TestPagePeersInChromium runs fib_rec(25) on it too.
func init() { wasmtimeTagged = true }
