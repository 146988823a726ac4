package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wasmgap/wasmgap/internal/results/pgtest"
)

// pgServer is one PostgreSQL server for the whole test binary, started on first use and
// stopped by TestMain.
var pgServer struct {
	once    sync.Once
	srv     *pgtest.Server
	err     error
	created atomic.Int64
}

// postgresDSN returns the address of a new, empty database on the test's PostgreSQL
// server, starting it on first use; it skips the test only when PostgreSQL is not
// installed.
func postgresDSN(t testing.TB) string {
	t.Helper()
	pgServer.once.Do(func() { pgServer.srv, pgServer.err = pgtest.Start() })
	if errors.Is(pgServer.err, pgtest.ErrNotInstalled) {
		t.Skip(pgServer.err)
	}
	if pgServer.err != nil {
		t.Fatal(pgServer.err)
	}
	name := fmt.Sprintf("results_%d", pgServer.created.Add(1))
	admin, err := sql.Open("pgx", pgServer.srv.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(context.Background(), "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return pgServer.srv.DSN(name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pgServer.srv != nil {
		pgServer.srv.Stop()
	}
	os.Exit(code)
}
