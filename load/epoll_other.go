//go:build !linux

package load

import (
	"context"
	"errors"
)

const epollSupported = false

func (r *httpRun) runEpoll(ctx context.Context) error {
	return errors.New("the epoll client needs Linux")
}
