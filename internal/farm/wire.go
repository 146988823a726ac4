package farm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
)

// Size limits of what travels over NATS. A job is a few hundred bytes; a result carries
// every sample of a cell (at most runner.MaxJobRuns) and the agent's description, tens of
// kilobytes. Anything larger is refused, never decoded.
const (
	MaxJobBytes    = 16 << 10
	MaxResultBytes = 512 << 10
)

// DefaultAttempts is how many deliveries of a job end without a result (its agent killed,
// its machine gone) before the job is reported as failed.
const DefaultAttempts = 3

// Job is one cell of a plan as the farm hands it to an agent: which cell, with its
// options as runner.Plan holds them, and where its result goes.
type Job struct {
	// ID names the job once across every farm run: a result is stored once per ID.
	ID string `json:"id"`
	// Run is the farm run the job belongs to; its results go to the subject of that run.
	Run string `json:"run"`
	// Cell is what to measure.
	Cell Cell `json:"cell"`
	// Attempts bounds the deliveries without a result before the job is given up.
	Attempts int `json:"attempts"`
}

// Cell is one kernel with its arguments on one engine, with the plan's options: zero
// durations are measure's defaults, negative ones none (as runner.Plan holds them).
type Cell struct {
	Engine  string          `json:"engine"`
	Kernel  string          `json:"kernel"`
	Args    []int           `json:"args"`
	Options measure.Options `json:"options"`
	Timeout time.Duration   `json:"timeout_ns,omitempty"`
	// Executions is the cell's worker processes, its runs spread over them (0: runner's
	// default), as bench's --executions.
	Executions int `json:"executions,omitempty"`
}

// Label is the cell as the reports write it: "fib_rec(40) on native".
func (c Cell) Label() string {
	return measure.Result{Kernel: c.Kernel, Args: c.Args}.Label() + " on " + c.Engine
}

// Result is an agent's answer to a job: the measured cell, or why the job was not run.
type Result struct {
	Job string `json:"job"`
	Run string `json:"run"`
	// Agent is the agent's name; Machine describes its machine.
	Agent   string  `json:"agent"`
	Machine Machine `json:"machine"`
	// Cell is the measurement, which may itself be a failure (timed out, crashed), as
	// bench reports it. Nil when the job was refused.
	Cell *measure.Result `json:"cell,omitempty"`
	// Refused says why the job was not run: malformed, too large, an engine the agent
	// lacks, given up after its attempts.
	Refused string `json:"refused,omitempty"`
	// Environment is the agent's, with the runtime of the cell's engine.
	Environment report.Environment `json:"environment"`
}

// namePattern is what a name in a subject may be: an agent's name, a run's id, a kind.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// CheckName refuses a name that cannot be one token of a NATS subject.
func CheckName(what, name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("%s %q: use 1 to 64 letters, digits, - or _", what, name)
	}
	return nil
}

// DecodeJob reads a job as an agent receives it, refusing one that is too large,
// malformed, or missing what it needs. The cell's names and ranges are checked where it
// runs (runner's plan).
func DecodeJob(data []byte) (Job, error) {
	var j Job
	if len(data) > MaxJobBytes {
		return j, fmt.Errorf("job of %d bytes is over the limit of %d bytes", len(data), MaxJobBytes)
	}
	if err := strictUnmarshal(data, &j); err != nil {
		return j, fmt.Errorf("malformed job: %w", err)
	}
	switch {
	case j.ID == "":
		return j, errors.New("malformed job: no id")
	case len(j.ID) > 200:
		return j, fmt.Errorf("malformed job: id of %d bytes (at most 200)", len(j.ID))
	case j.Cell.Engine == "" || j.Cell.Kernel == "":
		return j, errors.New("malformed job: it names no engine or no kernel")
	case j.Attempts < 1 || j.Attempts > 100:
		return j, fmt.Errorf("malformed job: attempts = %d: allowed 1 to 100", j.Attempts)
	}
	if err := CheckName("run", j.Run); err != nil {
		return j, fmt.Errorf("malformed job: %w", err)
	}
	return j, nil
}

// DecodeResult reads a result as the farm's collector receives it, refusing one that is
// too large or malformed.
func DecodeResult(data []byte) (Result, error) {
	var r Result
	if len(data) > MaxResultBytes {
		return r, fmt.Errorf("result of %d bytes is over the limit of %d bytes", len(data), MaxResultBytes)
	}
	if err := strictUnmarshal(data, &r); err != nil {
		return r, fmt.Errorf("malformed result: %w", err)
	}
	if r.Job == "" {
		return r, errors.New("malformed result: no job id")
	}
	if err := CheckName("agent", r.Agent); err != nil {
		return r, fmt.Errorf("malformed result: %w", err)
	}
	if (r.Cell == nil) == (r.Refused == "") {
		return r, errors.New("malformed result: it holds neither a cell nor a refusal, or both")
	}
	return r, nil
}

// strictUnmarshal decodes one JSON value, refusing unknown fields and trailing data.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}
