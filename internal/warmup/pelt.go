package warmup

import (
	"math"
	"slices"
)

// PELT returns the changepoints of y (the indices where a new segment starts, ascending)
// that minimise the sum of the segments' costs plus penalty per changepoint, each segment
// at least minSeg long: the Pruned Exact Linear Time method of Killick, Fearnhead and
// Eckley (2012). A segment's cost is twice its negative Gaussian log-likelihood with its
// own mean and variance (m·ln σ̂², constants dropped), so a change of the mean, of the
// variance or of both is found; σ̂ is never taken below 0.1% of the segment's mean.
func PELT(y []float64, penalty float64, minSeg int) []int {
	n := len(y)
	if n < 2*minSeg {
		return nil
	}
	// Scaled to a median of 1: the costs do not depend on the unit, and the sums of
	// squares stay well inside float64's precision.
	scale := median(y)
	if !(scale > 0) {
		scale = 1
	}
	s1 := make([]float64, n+1)
	s2 := make([]float64, n+1)
	for i, v := range y {
		v /= scale
		s1[i+1] = s1[i] + v
		s2[i+1] = s2[i] + v*v
	}
	cost := func(s, t int) float64 {
		m := float64(t - s)
		mu := (s1[t] - s1[s]) / m
		v := (s2[t]-s2[s])/m - mu*mu
		floor := relFloor * mu
		v = max(v, floor*floor, 1e-18)
		return m * math.Log(v)
	}
	f := make([]float64, n+1)
	last := make([]int, n+1)
	for t := 1; t <= n; t++ {
		f[t] = math.Inf(1)
	}
	f[0] = -penalty
	var cands []int
	var vals []float64
	for t := minSeg; t <= n; t++ {
		// τ = t − minSeg becomes a candidate once a segment ending there is possible.
		if tau := t - minSeg; tau == 0 || tau >= minSeg {
			cands = append(cands, tau)
		}
		best, arg := math.Inf(1), 0
		vals = vals[:0]
		for i, tau := range cands {
			vals = append(vals, f[tau]+cost(tau, t))
			if c := vals[i] + penalty; c < best {
				best, arg = c, tau
			}
		}
		f[t], last[t] = best, arg
		// Pruning: a τ that cannot beat t now never will (K = 0 for this cost).
		kept := cands[:0]
		for i, tau := range cands {
			if vals[i] <= f[t] {
				kept = append(kept, tau)
			}
		}
		cands = kept
	}
	var cps []int
	for t := last[n]; t > 0; t = last[t] {
		cps = append(cps, t)
	}
	slices.Reverse(cps)
	return cps
}

// replaceOutliers marks the samples outside Tukey's far-out fences (Q1 − 3·IQR, Q3 + 3·IQR)
// of the OutlierWindow samples around them — among the first OutlierWindow samples only
// an isolated one, both neighbours inside the fences, and never the first — and returns
// the series with each outlier replaced by its window's median, and the outliers' indices.
func replaceOutliers(y []float64) ([]float64, []int) {
	n := len(y)
	out := slices.Clone(y)
	w := min(OutlierWindow, n)
	var idx []int
	win := make([]float64, 0, w)
	lastLo := -1
	var q1, q3, med float64
	outside := func(v float64) bool { return v < q1-OutlierFence*(q3-q1) || v > q3+OutlierFence*(q3-q1) }
	for i := 1; i < n; i++ {
		lo := max(0, min(i-w/2, n-w))
		if lo != lastLo {
			win = append(win[:0], y[lo:lo+w]...)
			slices.Sort(win)
			q1, q3, med = quantile(win, 0.25), quantile(win, 0.75), quantile(win, 0.5)
			lastLo = lo
		}
		if !outside(y[i]) {
			continue
		}
		if i < OutlierWindow && (outside(y[i-1]) || i+1 < n && outside(y[i+1])) {
			continue // a run of slow calls at the start: warm-up, not noise
		}
		idx = append(idx, i)
		out[i] = med
	}
	return out, idx
}

// quantile is the q-quantile of sorted values, interpolated linearly between ranks.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}

// median is the median of v (v is not changed).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return quantile(s, 0.5)
}
