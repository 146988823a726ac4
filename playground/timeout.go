package playground

import (
	"time"

	"github.com/wasmgap/wasmgap/internal/runner"
)

// limit returns the server's time limit of a cell: Options.Timeout, else the runner's.
func (s *Server) limit() time.Duration {
	if s.opts.Timeout > 0 {
		return s.opts.Timeout
	}
	return runner.DefaultTimeout
}
