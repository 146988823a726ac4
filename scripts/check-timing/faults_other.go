//go:build !unix

package main

import "os"

// minorFaults knows nothing off Unix.
func minorFaults(*os.ProcessState) (int64, bool) { return 0, false }
