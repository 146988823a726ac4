//go:build !unix

package load

import "fmt"

const fileSlack = 64

// fileLimit is the open-file limit a run works under; unknown on this system.
type fileLimit struct {
	cur, max   uint64
	raisedFrom uint64
}

// raiseFileLimit does nothing where there is no RLIMIT_NOFILE, except honour a fake limit.
func raiseFileLimit(need int, fakeMax uint64) (fileLimit, error) {
	if fakeMax > 0 && uint64(need) > fakeMax {
		return fileLimit{max: fakeMax}, fmt.Errorf("they need about %d open files, but the limit is %d", need, fakeMax)
	}
	return fileLimit{}, nil
}
