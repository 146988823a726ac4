package playground

import (
	"fmt"
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

// cellTimeout is a run request's own time limit (timeout_ms), from a second up to the
// server's limit; absent, the server's.
func (s *Server) cellTimeout(ms *int) (time.Duration, *apiError) {
	if ms == nil {
		return s.opts.Timeout, nil
	}
	most := s.limit()
	if *ms < 1000 || time.Duration(*ms)*time.Millisecond > most {
		return 0, &apiError{Error: fmt.Sprintf("timeout_ms = %d is out of range: allowed 1000 to the server's limit, %d", *ms, most.Milliseconds()), Field: "timeout_ms"}
	}
	return time.Duration(*ms) * time.Millisecond, nil
}
