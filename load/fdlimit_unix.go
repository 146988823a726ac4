//go:build unix

package load

import (
	"fmt"
	"syscall"
)

// fileSlack is the open files a run needs besides its connections: standard streams, the
// epoll set, the sampler's /proc reads, a store or a listener of a server in the process.
const fileSlack = 64

// fileLimit is the open-file limit (RLIMIT_NOFILE) a run works under.
type fileLimit struct {
	cur, max   uint64
	raisedFrom uint64 // the soft limit before this run raised it; 0 if it did not
}

// raiseFileLimit raises the soft limit on open files to the hard limit (Go does so at start
// on Linux; other programs embedding the package may not have) and checks that need files
// fit. fakeMax, when positive, stands in for the hard limit (tests).
func raiseFileLimit(need int, fakeMax uint64) (fileLimit, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return fileLimit{}, fmt.Errorf("read the open-file limit (RLIMIT_NOFILE): %w", err)
	}
	l := fileLimit{cur: rl.Cur, max: rl.Max}
	if fakeMax > 0 {
		l.max = fakeMax
		l.cur = min(l.cur, fakeMax)
	}
	if uint64(need) > l.max {
		return l, fmt.Errorf("they need about %d open files, but the hard limit (RLIMIT_NOFILE) is %d: "+
			"raise it (ulimit -n %d as root, or LimitNOFILE= in a systemd unit) or ask for fewer", need, l.max, need)
	}
	if l.cur < l.max && fakeMax == 0 {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			return l, fmt.Errorf("raise the open-file limit (RLIMIT_NOFILE) from %d to %d: %w (try ulimit -n %d)", l.cur, l.max, err, l.max)
		}
		l.raisedFrom, l.cur = l.cur, l.max
	} else if l.cur < l.max {
		l.raisedFrom, l.cur = l.cur, l.max
	}
	return l, nil
}
