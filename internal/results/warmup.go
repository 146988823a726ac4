package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/warmup"
)

// Study is one stored warm-up study: the report of `wasmgap warmup` or of the page's
// Warm-up view (package internal/warmup), with when and by what it was made.
type Study struct {
	ID      int64     `json:"id"`
	Created time.Time `json:"created"`
	// Source is SourceCLI for `wasmgap warmup`, SourceServer for a study the playground's
	// server ran for the page.
	Source string `json:"source"`
	// Wasmgap is the version of wasmgap that measured (Version).
	Wasmgap string        `json:"wasmgap"`
	Report  warmup.Report `json:"report"`
}

// ErrStudyNotFound is the error (through errors.Is) of a study id the store does not hold.
var ErrStudyNotFound = errors.New("no such warm-up study")

// NewStudy describes a study measured here (by the CLI or the server), now.
func NewStudy(source string, rep warmup.Report) Study {
	return Study{Created: time.Now().UTC(), Source: source, Wasmgap: Version(), Report: rep}
}

// SaveStudy stores a finished warm-up study and returns its id. A study with no engine
// is refused, and so is one that would take the store past its byte limit (*FullError).
func (s *Store) SaveStudy(ctx context.Context, st Study) (int64, error) {
	if len(st.Report.Engines) == 0 {
		return 0, errors.New("save warm-up study: it has no engine")
	}
	if st.Report.Kernel == "" {
		return 0, errors.New("save warm-up study: it names no kernel")
	}
	if st.Created.IsZero() {
		st.Created = time.Now().UTC()
	}
	js, err := json.Marshal(st.Report)
	if err != nil {
		return 0, fmt.Errorf("save warm-up study: %w", err)
	}
	engines := make([]string, len(st.Report.Engines))
	for i, e := range st.Report.Engines {
		engines[i] = e.Engine
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("save warm-up study: %w", err)
	}
	defer tx.Rollback()
	// Twice the JSON, as runBytes counts: the row and its page overhead.
	if err := s.checkBytes(ctx, tx, 2*int64(len(js))); err != nil {
		return 0, fmt.Errorf("save warm-up study: %w", err)
	}
	var id int64
	err = tx.QueryRowContext(ctx, s.d.q(`INSERT INTO warmup_studies (created_ns, source, wasmgap, kernel, args, engines, study)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		st.Created.UnixNano(), st.Source, st.Wasmgap, st.Report.Kernel, argsKey(st.Report.Args), strings.Join(engines, ","), string(js)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("save warm-up study: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("save warm-up study: %w", err)
	}
	return id, nil
}

// Study returns the stored warm-up study id, or an error that is ErrStudyNotFound.
func (s *Store) Study(ctx context.Context, id int64) (Study, error) {
	st := Study{ID: id}
	var created int64
	var js string
	err := s.db.QueryRowContext(ctx, s.d.q("SELECT created_ns, source, wasmgap, study FROM warmup_studies WHERE id = ?"), id).
		Scan(&created, &st.Source, &st.Wasmgap, &js)
	if errors.Is(err, sql.ErrNoRows) {
		return st, fmt.Errorf("warm-up study %d: %w", id, ErrStudyNotFound)
	}
	if err != nil {
		return st, fmt.Errorf("warm-up study %d: %w", id, err)
	}
	st.Created = time.Unix(0, created).UTC()
	if err := json.Unmarshal([]byte(js), &st.Report); err != nil {
		return st, fmt.Errorf("warm-up study %d: %w", id, err)
	}
	return st, nil
}
