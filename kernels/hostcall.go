package kernels

// The host-call kernel: not one of the articles' kernels but a measure of the wasm module's
// boundary. Its function lives apart from Source, since only the engines that call
// kernels.wasm from a host run it (Kernel.HostCall): an interpreter or a native build has no
// such boundary to time.

// NopValue is what Nop (the module's export nop) returns: a constant, so that the harness
// checks every call as it checks a kernel's value, and a call that did not happen cannot
// pass for one that did.
const NopValue = 1

// Nop does nothing and returns NopValue: timed as the module's export nop, one call from
// the host per iteration, it is what an embedder pays for one call into the module.
func Nop() int64 { return NopValue }
