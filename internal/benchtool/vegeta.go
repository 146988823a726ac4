package benchtool

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// ParseVegeta reads the JSON report of `vegeta report -type=json` (vegeta 12). RPS is the
// rate of requests sent over the attack (vegeta's "rate": with -rate=0 and a fixed number of
// workers, a closed model, that is the rate answered, as wrk and ab count theirs); Errors are
// the requests whose answer is not 2xx, the failed ones (status 0) included.
func ParseVegeta(out []byte) (Result, error) {
	var rep struct {
		Latencies struct {
			P99 *int64 `json:"99th"` // nanoseconds
		} `json:"latencies"`
		Requests    int64            `json:"requests"`
		Rate        *float64         `json:"rate"`
		StatusCodes map[string]int64 `json:"status_codes"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return Result{}, fmt.Errorf("parse vegeta's JSON report: %w", err)
	}
	if rep.Rate == nil || rep.Latencies.P99 == nil {
		return Result{}, fmt.Errorf("parse vegeta's JSON report: no rate or latencies.99th in %.200q", out)
	}
	var ok int64
	for code, n := range rep.StatusCodes {
		if c, err := strconv.Atoi(code); err == nil && c >= 200 && c < 300 {
			ok += n
		}
	}
	return Result{RPS: *rep.Rate, P99: time.Duration(*rep.Latencies.P99), Requests: rep.Requests,
		Errors: rep.Requests - ok}, nil
}
