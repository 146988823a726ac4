//go:build !unix

package native_test

import "os"

// minorFaults knows nothing off Unix.
func minorFaults(*os.ProcessState) (int64, bool) { return 0, false }
