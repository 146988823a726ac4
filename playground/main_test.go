package playground

import (
	"os"
	"testing"

	"github.com/wasmgap/wasmgap/internal/runner"
)

// TestMain lets this test binary serve as the runner's worker process (and the user
// kernels' build helper), and removes the user kernels the tests built.
func TestMain(m *testing.M) {
	runner.ServeWorkerIfRequested()
	code := m.Run()
	if s, dir := customServer(); s != nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}
