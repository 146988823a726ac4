package warmup

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// phase is a stretch of a synthetic series: n samples around mean (ns), with a normal
// noise of sd, a level that moves by slope per sample.
type phase struct {
	n        int
	mean, sd float64
	slope    float64
}

// series makes a deterministic series from its phases (seeded: the same every run).
func series(seed uint64, phases ...phase) []float64 {
	r := rand.New(rand.NewPCG(seed, 42))
	var out []float64
	for _, p := range phases {
		for i := range p.n {
			v := p.mean + p.slope*float64(i) + r.NormFloat64()*p.sd
			out = append(out, max(v, 1))
		}
	}
	return out
}

// alternating makes levels a and b in turns of n samples, count turns.
func alternating(seed uint64, a, b float64, n, count int) []float64 {
	var ps []phase
	for i := range count {
		m := a
		if i%2 == 1 {
			m = b
		}
		ps = append(ps, phase{n: n, mean: m, sd: m / 50})
	}
	return series(seed, ps...)
}

// wandering makes a series whose level moves by up to ±30% every 100 samples.
func wandering(seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	var ps []phase
	level := 100.0
	for range 20 {
		level *= 0.7 + 0.6*r.Float64()
		ps = append(ps, phase{n: 100, mean: level, sd: level / 100})
	}
	return series(seed, ps...)
}

func TestAnalyzeClassifies(t *testing.T) {
	spiky := series(3, phase{n: 2000, mean: 100, sd: 1})
	for i := 300; i < 2000; i += 170 {
		spiky[i] *= 20 // a collection, a preemption: outliers, not phases
	}
	tests := []struct {
		name  string
		times []float64
		group int
		class Class
		// steady is the expected SteadyStart (-1: none), within slack samples.
		steady, slack int
		// median is the expected steady median, within 3%; zero when there is none.
		median float64
	}{
		{"flat", series(1, phase{n: 2000, mean: 100, sd: 2}), 1, Flat, 0, 0, 100},
		{"flat with outliers", spiky, 1, Flat, 0, 0, 100},
		{"a change smaller than the tolerance is flat", series(2, phase{n: 500, mean: 103, sd: 0.5}, phase{n: 1500, mean: 100, sd: 0.5}), 1, Flat, 0, 0, 100},
		{"slower bursts between steady stretches are flat", series(16, phase{n: 400, mean: 100, sd: 1}, phase{n: 30, mean: 160, sd: 30}, phase{n: 900, mean: 100, sd: 1}, phase{n: 40, mean: 140, sd: 20}, phase{n: 630, mean: 100, sd: 1}), 1, Flat, 0, 0, 100},
		{"a faster stretch before the steady state is a slowdown, not flat", series(17, phase{n: 400, mean: 100, sd: 1}, phase{n: 300, mean: 70, sd: 1}, phase{n: 1300, mean: 100, sd: 1}), 1, Slowdown, 700, 0, 100},
		{"one step down", series(4, phase{n: 300, mean: 500, sd: 10}, phase{n: 1700, mean: 100, sd: 2}), 1, Warmup, 300, 0, 100},
		{"two steps down, grouped calls", series(5, phase{n: 50, mean: 5000, sd: 100}, phase{n: 250, mean: 800, sd: 20}, phase{n: 1700, mean: 100, sd: 2}), 8, Warmup, 300, 0, 100},
		{"a slowdown", series(6, phase{n: 1000, mean: 100, sd: 2}, phase{n: 1000, mean: 150, sd: 3}), 1, Slowdown, 1000, 0, 150},
		{"warm-up then a slowdown", series(7, phase{n: 200, mean: 300, sd: 5}, phase{n: 800, mean: 100, sd: 2}, phase{n: 1000, mean: 130, sd: 2}), 1, Slowdown, 1000, 0, 130},
		{"a step up near the end is no steady state", series(8, phase{n: 1800, mean: 100, sd: 2}, phase{n: 200, mean: 200, sd: 4}), 1, NoSteadyState, -1, 0, 0},
		{"alternating levels are no steady state", alternating(9, 100, 200, 150, 14), 1, NoSteadyState, -1, 0, 0},
		{"a drift is no steady state", series(10, phase{n: 2000, mean: 100, sd: 2, slope: 0.2}), 1, NoSteadyState, -1, 0, 0},
		{"levels that wander are no steady state", wandering(11), 1, NoSteadyState, -1, 0, 0},
		{"noise that grows at the end keeps the mean's steady state", series(15, phase{n: 1700, mean: 100, sd: 1}, phase{n: 300, mean: 100, sd: 3}), 1, Flat, 0, 0, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := Analyze(tt.times, tt.group, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if x.Class != tt.class {
				t.Fatalf("class %q, want %q; changepoints %v, segments %+v", x.Class, tt.class, x.Changepoints, x.Segments)
			}
			if x.Samples != len(tt.times) || x.Group != tt.group {
				t.Errorf("samples %d group %d, want %d and %d", x.Samples, x.Group, len(tt.times), tt.group)
			}
			if tt.steady < 0 {
				if x.SteadyStart != -1 || x.SteadyMedian != 0 || x.SteadyCalls != 0 {
					t.Errorf("a series with no steady state has steady start %d, median %v, calls %d", x.SteadyStart, x.SteadyMedian, x.SteadyCalls)
				}
				return
			}
			if d := x.SteadyStart - tt.steady; d < -tt.slack || d > tt.slack {
				t.Errorf("steady start %d, want %d ± %d; changepoints %v", x.SteadyStart, tt.steady, tt.slack, x.Changepoints)
			}
			if x.SteadyCalls != x.SteadyStart*tt.group {
				t.Errorf("steady calls %d, want %d × %d", x.SteadyCalls, x.SteadyStart, tt.group)
			}
			var before float64
			for _, v := range tt.times[:x.SteadyStart] {
				before += v * float64(tt.group)
			}
			if x.SteadyAfterNs != before {
				t.Errorf("time to steady state %v ns, want the sum of the calls before it, %v", x.SteadyAfterNs, before)
			}
			if x.SteadyMedian < tt.median*0.97 || x.SteadyMedian > tt.median*1.03 {
				t.Errorf("steady median %v, want %v ± 3%%", x.SteadyMedian, tt.median)
			}
			if !x.SteadyCI.Valid() || x.SteadyCI.Lo > x.SteadyMedian || x.SteadyCI.Hi < x.SteadyMedian {
				t.Errorf("interval %+v does not hold the median %v", x.SteadyCI, x.SteadyMedian)
			}
			if tt.class == Flat && x.SteadyStart != 0 {
				t.Errorf("a flat series is steady from sample %d, want 0", x.SteadyStart)
			}
			for _, s := range x.Segments {
				if tt.class != Flat && s.Steady != (s.Start >= x.SteadyStart) {
					t.Errorf("segment %+v: steady is %v with the steady state from %d", s, s.Steady, x.SteadyStart)
				}
			}
		})
	}
}

func TestAnalyzeFindsTheStep(t *testing.T) {
	times := series(12, phase{n: 300, mean: 500, sd: 10}, phase{n: 1700, mean: 100, sd: 2})
	x, err := Analyze(times, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.Changepoints, []int{300}) {
		t.Fatalf("changepoints %v, want [300]", x.Changepoints)
	}
	if len(x.Segments) != 2 || x.Segments[0].End != 300 || x.Segments[1].Start != 300 || x.Segments[1].End != 2000 {
		t.Fatalf("segments %+v, want [0,300) and [300,2000)", x.Segments)
	}
	if x.Words() != "warm-up, steady after 300 calls, 0.15 ms" {
		t.Errorf("words %q", x.Words())
	}
}

func TestAnalyzeMarksOutliersAfterTheWindow(t *testing.T) {
	times := series(13, phase{n: 1000, mean: 100, sd: 1})
	times[0], times[1], times[2] = 5000, 3000, 2000 // a warm-up: a run of slow calls
	times[100] = 5000                               // within the first window, but isolated
	times[600] = 5000                               // an outlier
	x, err := Analyze(times, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.Outliers, []int{100, 600}) {
		t.Errorf("outliers %v: want [100 600], not the first calls", x.Outliers)
	}
}

func TestAnalyzeJetStreamScores(t *testing.T) {
	times := make([]float64, 20)
	for i := range times {
		times[i] = 10
	}
	times[0] = 1000
	times[5], times[7], times[9], times[11], times[13] = 50, 40, 30, 20, 15
	x, err := Analyze(times, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if x.First != 1000 {
		t.Errorf("first %v, want 1000", x.First)
	}
	if x.Worst != (50+40+30+20)/4.0 {
		t.Errorf("worst %v, want the mean of the 4 slowest after the first, 35", x.Worst)
	}
	if want := (50 + 40 + 30 + 20 + 15 + 14*10) / 19.0; x.Average != want {
		t.Errorf("average %v, want %v", x.Average, want)
	}
	if want := (1000 + 50 + 40 + 30 + 6*10) / 10.0; x.Early != want {
		t.Errorf("early %v, want %v", x.Early, want)
	}
}

func TestAnalyzeRefuses(t *testing.T) {
	ok := series(14, phase{n: 100, mean: 100, sd: 1})
	tests := []struct {
		name  string
		times []float64
		group int
		opts  Options
		want  string
	}{
		{"too short", ok[:MinSamples-1], 1, Options{}, "needs 10 or more"},
		{"too long", make([]float64, MaxSamples+1), 1, Options{}, "takes 10000 at most"},
		{"zero time", append(slices.Clone(ok[:20]), 0), 1, Options{}, "sample 20 is 0 ns"},
		{"no group", ok, 0, Options{}, "want 1 or more"},
		{"negative penalty", ok, 1, Options{PenaltyFactor: -1}, "penalty factor"},
		{"tolerance of one", ok, 1, Options{Tolerance: 1}, "tolerance"},
		{"steady share", ok, 1, Options{SteadyShare: 2}, "steady share"},
		{"segment of one", ok, 1, Options{MinSegment: 1}, "minimum segment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Analyze(tt.times, tt.group, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one that says %q", err, tt.want)
			}
		})
	}
}

func TestJudge(t *testing.T) {
	ex := func(cs ...Class) []Execution {
		var xs []Execution
		for _, c := range cs {
			xs = append(xs, Execution{Class: c})
		}
		return xs
	}
	tests := []struct {
		name    string
		execs   []Execution
		verdict string
		class   Class
		good    bool
	}{
		{"all flat", ex(Flat, Flat, Flat), Consistent, Flat, true},
		{"all warm-up", ex(Warmup, Warmup), Consistent, Warmup, true},
		{"all slowdown", ex(Slowdown, Slowdown), Consistent, Slowdown, false},
		{"flat and warm-up", ex(Flat, Warmup, Flat), GoodInconsistent, "", true},
		{"warm-up and slowdown", ex(Warmup, Slowdown), BadInconsistent, "", false},
		{"flat and no steady state", ex(Flat, NoSteadyState), BadInconsistent, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Judge(tt.execs)
			if err != nil {
				t.Fatal(err)
			}
			if p.Verdict != tt.verdict || p.Class != tt.class || p.Good != tt.good {
				t.Errorf("got %+v, want %q %q good=%v", p, tt.verdict, tt.class, tt.good)
			}
			total := 0
			for _, n := range p.Classes {
				total += n
			}
			if total != len(tt.execs) {
				t.Errorf("classes %v count %d executions, want %d", p.Classes, total, len(tt.execs))
			}
		})
	}
	if _, err := Judge(nil); err == nil {
		t.Error("Judge(nil) gave no error")
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		x    Execution
		want string
	}{
		{Execution{Class: Flat}, "flat"},
		{Execution{Class: NoSteadyState}, "no steady state"},
		{Execution{Class: Warmup, SteadyCalls: 1240, SteadyAfterNs: 38e6}, "warm-up, steady after 1,240 calls, 38 ms"},
		{Execution{Class: Slowdown, SteadyCalls: 1234567, SteadyAfterNs: 2.5e6}, "slowdown, steady after 1,234,567 calls, 2.5 ms"},
	}
	for _, tt := range tests {
		if got := tt.x.Words(); got != tt.want {
			t.Errorf("Words() = %q, want %q", got, tt.want)
		}
	}
}
