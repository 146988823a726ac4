package playground

import (
	"os"
	"testing"

	"github.com/wasmgap/wasmgap/runner"
)

// TestMain lets this test binary serve as the runner's worker process.
func TestMain(m *testing.M) {
	runner.ServeWorkerIfRequested()
	os.Exit(m.Run())
}
