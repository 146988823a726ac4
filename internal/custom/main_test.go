package custom

import (
	"os"
	"path/filepath"
	"testing"
)

// testGoCache is the Go build cache the tests' builders share across runs, so that only
// the first run pays for compiling the standard library for wasip1.
var testGoCache = filepath.Join(DefaultDir(), "gocache")

func TestMain(m *testing.M) {
	ExecLimitedIfRequested()
	code := m.Run()
	if testBuilderVal != nil {
		os.RemoveAll(testBuilderVal.opts.Dir)
	}
	os.Exit(code)
}
