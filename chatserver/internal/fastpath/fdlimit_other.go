//go:build !unix

package fastpath

// DefaultMaxConns is the default of Options.MaxConns: unlimited where the
// open-file limit cannot be read.
func DefaultMaxConns() int { return 0 }
