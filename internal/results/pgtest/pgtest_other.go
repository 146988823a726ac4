//go:build !unix

package pgtest

import "errors"

// ErrNotInstalled is Start's error where PostgreSQL's binaries are not installed.
var ErrNotInstalled = errors.New("PostgreSQL is started as the postgres user, a Unix notion: not on this system")

// Server is a running PostgreSQL server.
type Server struct {
	// Addr is where it listens: 127.0.0.1:port.
	Addr string
}

// Start returns ErrNotInstalled: the tests start PostgreSQL on Unix only.
func Start() (*Server, error) { return nil, ErrNotInstalled }

// DSN is the address of the named database on the server, as the results store takes it.
func (s *Server) DSN(db string) string {
	return "postgres://postgres@" + s.Addr + "/" + db + "?sslmode=disable"
}

// Stop stops the server.
func (s *Server) Stop() {}
