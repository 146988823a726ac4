package playground

import (
	"fmt"
	"math"
	"net/http"
)

// decodeShare reads the one JSON object of a submission, and says what was wrong with
// the status that answers it (jsonBody.decode).
func decodeShare(w http.ResponseWriter, r *http.Request) (shareRequest, *apiError) {
	var req shareRequest
	return req, jsonBody{route: "POST /api/results/share", max: maxShareBody, fields: "browser, method and cells"}.decode(w, r, &req)
}

// clockResolution is the shortest time a sample of a submission may last, in ns: no
// clock here reads finer than 1 ns, and a browser's performance.now() moves in steps
// (5 µs to 1 ms; the page tells the smallest it saw as timer_resolution_ns): a sample
// shorter than half a step read the clock, not the kernel. Half, because the step the
// page saw and a sample's difference of two readings are both rounded.
func clockResolution(timerStepNS float64) float64 {
	return max(1, timerStepNS/2)
}

// checkSample checks one sample of a shared cell, in ns per call: a finite number above
// zero, at most maxSampleNS, whose calls together lasted at least the clock's resolution.
func checkSample(label string, v float64, calls int, resolution float64) *apiError {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v > maxSampleNS {
		return &apiError{Error: fmt.Sprintf("%s: a sample of %v ns is out of range: allowed above 0 to %g ns", label, v, maxSampleNS), Field: "samples_ns"}
	}
	if lasted := v * float64(calls); lasted < resolution {
		over := fmt.Sprintf("over %d calls", calls)
		if calls == 1 {
			over = "of one call"
		}
		return &apiError{Error: fmt.Sprintf("%s: a sample of %g ns per call %s lasted %g ns, below the clock's resolution of %g ns (1 ns, and half the browser's timer step): it timed the clock, not the kernel",
			label, v, over, lasted, resolution), Field: "samples_ns"}
	}
	return nil
}
