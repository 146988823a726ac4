package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// DefaultMaxBytes bounds the data a store holds unless SetMaxBytes says otherwise: as
// much as the chat's store.
const DefaultMaxBytes = 1 << 30

// ErrFull is the error (through errors.Is) of a run refused because storing it would take
// the store past its byte limit.
var ErrFull = errors.New("the results store is full")

// FullError is a run refused by the store's byte limit; nothing of it was stored.
type FullError struct {
	// Bytes is what the store would hold with the run, Max its limit.
	Bytes, Max int64
}

func (e *FullError) Error() string {
	return fmt.Sprintf("the results store is full: with this run it would hold %s, past its limit of %s; nothing of the run was stored (delete old runs with `wasmgap results delete`, or raise the limit)",
		mib(e.Bytes), mib(e.Max))
}

// Is makes errors.Is(err, ErrFull) true.
func (e *FullError) Is(target error) bool { return target == ErrFull }

// mib renders a size: in bytes below 1 KiB, in KiB below 1 MiB, in MiB with one decimal
// below 10.
func mib(n int64) string {
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	if n < 10<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// SetMaxBytes bounds the data the store holds (its tables and indexes: an SQLite file's
// pages in use, whose pages freed by a delete are used again; PostgreSQL's tables on
// disk, which give back the room of deleted rows after VACUUM FULL): Save refuses a run
// that would take it past n (its size estimated before it is written) with a *FullError,
// and what is stored stays. n ≤ 0 restores DefaultMaxBytes. Call it before the
// store is shared.
func (s *Store) SetMaxBytes(n int64) { s.maxBytes = n }

// MaxBytes is the store's byte limit.
func (s *Store) MaxBytes() int64 {
	if s.maxBytes <= 0 {
		return DefaultMaxBytes
	}
	return s.maxBytes
}

// Bytes is the data the store holds: its tables and indexes.
func (s *Store) Bytes(ctx context.Context) (int64, error) {
	return s.size(ctx, s.db)
}

// querier is what size needs of a *sql.DB or a *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// size is the store's data as q sees it (inside a transaction, with what it wrote):
// SQLite's pages in use, or PostgreSQL's tables with their indexes and TOAST.
func (s *Store) size(ctx context.Context, q querier) (int64, error) {
	var n int64
	var err error
	if s.d.numbered {
		err = q.QueryRowContext(ctx, `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::BIGINT FROM pg_class c
			WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace
			AND c.relname IN ('runs', 'cells', 'cell_counts', 'facets', 'schema_version', 'warmup_studies')`).Scan(&n)
	} else {
		err = q.QueryRowContext(ctx, "SELECT (page_count - freelist_count) * page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()").Scan(&n)
	}
	if err != nil {
		return 0, fmt.Errorf("the store's size: %w", err)
	}
	return n, nil
}

// checkRoom refuses, with a *FullError, a run that would take the store past its limit:
// called by Save before it writes, so that a refused run grows no file (a transaction
// rolled back still leaves PostgreSQL's tables grown).
func (s *Store) checkRoom(ctx context.Context, tx *sql.Tx, run Run) error {
	return s.checkBytes(ctx, tx, runBytes(run))
}

// checkBytes refuses, with a *FullError, adding add bytes to the store past its limit.
func (s *Store) checkBytes(ctx context.Context, tx *sql.Tx, add int64) error {
	n, err := s.size(ctx, tx)
	if err != nil {
		return err
	}
	n += add
	if max := s.MaxBytes(); n > max {
		return &FullError{Bytes: n, Max: max}
	}
	return nil
}

// runBytes estimates what storing run adds: its cells' JSON, its method and environment,
// twice (the rows, and the indexes and cell_counts' rows that repeat their fields).
func runBytes(run Run) int64 {
	n := 0
	for _, v := range []any{run.Report.Method, run.Report.Environment, run.Browser} {
		b, _ := json.Marshal(v)
		n += len(b)
	}
	for _, r := range run.Report.Results {
		b, _ := json.Marshal(r)
		n += len(b)
	}
	return 2 * int64(n)
}
