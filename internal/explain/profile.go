package explain

import "context"

// Profile is where a timed run's samples fell.
type Profile struct {
	// Samples is how many samples the run took in all; InFunction how many fell on the
	// listing's instructions (the lines' Samples add up to it).
	Samples    int `json:"samples"`
	InFunction int `json:"in_function"`
	// Refused says why there is no profile (perf missing or not permitted).
	Refused string `json:"refused,omitempty"`
}

func profileEngine(ctx context.Context, name string, r request, ls []Listing) {
	for i := range ls {
		ls[i].Profile = &Profile{Refused: "profiles are not taken for " + name + " yet"}
	}
}
