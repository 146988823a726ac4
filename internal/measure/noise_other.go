//go:build !linux

package measure

// readCPU knows nothing outside Linux.
func readCPU() (busy, self, faults uint64, wall float64, ok bool) { return 0, 0, 0, 0, false }

// readLoad knows nothing outside Linux.
func readLoad() (float64, bool) { return 0, false }

// readSteal knows nothing outside Linux.
func readSteal() (uint64, bool) { return 0, false }
