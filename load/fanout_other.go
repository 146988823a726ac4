//go:build !linux

package load

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
)

// Elsewhere than on Linux every receiver reads its stream on its own goroutine.

const streamLoopsSupported = false

var streamsOnLoops atomic.Int64 // never counts: there are no loops

type streamLoops struct{}

func newStreamLoops(int) (*streamLoops, error) {
	return nil, errors.New("the receivers' event loops need Linux")
}

func defaultStreamLoops() int { return 0 }

func (*streamLoops) stop() {}

func (s *subscriber) readOnLoop(context.Context, net.Conn, []byte, streamParser, func(event)) error {
	return errors.New("the receivers' event loops need Linux")
}
