//go:build !unix

package custom

import "errors"

func execLimited(Limits, []string, []string) error {
	return errors.New("user kernels are built only on Unix systems, where the build's limits can be set")
}

func limitSelf(uint64) error {
	return errors.New("user kernels run only on Unix systems, where their memory can be limited")
}
