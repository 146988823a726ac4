//go:build unix

package fastpath

import "syscall"

// DefaultMaxConns is the default of Options.MaxConns: the process's limit
// of open files (RLIMIT_NOFILE, which Go raises to its hard limit at
// start) less a tenth, at least 256, for the store, the logs, the
// runtime's own descriptors and the connections refused meanwhile; 0
// (unlimited) when the limit cannot be read.
func DefaultMaxConns() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 {
		return 0
	}
	limit := min(rl.Cur, 1<<30)
	headroom := max(limit/10, 256)
	if limit <= headroom {
		return 1
	}
	return int(limit - headroom)
}
