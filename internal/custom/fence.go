package custom

import (
	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/sandbox"
)

// FencePolicy is what a worker process that runs k on the named engine may still reach
// once it is fenced (package sandbox): /proc, read-only, for the measurement's noise
// meter (Landlock keeps other processes' memory, environment and maps out of reach), and,
// for the native engine, k's folder, to read and execute its executable. The module and
// the source are read before the fence.
func FencePolicy(k *Kernel, engineName string) sandbox.Policy {
	p := sandbox.Policy{Read: []string{"/proc"}}
	if engineName == engine.Native {
		p.Exec = []string{k.Dir}
	}
	return p
}
