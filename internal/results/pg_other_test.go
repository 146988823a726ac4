//go:build !unix

package results

import "testing"

// postgresDSN skips: the tests start PostgreSQL as the postgres user, a Unix notion.
func postgresDSN(t testing.TB) string {
	t.Skip("the PostgreSQL tests run on Unix only (they start a server as the postgres user)")
	return ""
}
