package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Load is the machine's load average (/proc/loadavg): the runnable and waiting tasks,
// averaged over one, five and fifteen minutes.
type Load struct {
	One, Five, Fifteen float64
}

// ReadLoad reads /proc/loadavg.
func ReadLoad() (Load, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return Load{}, err
	}
	return ParseLoad(b)
}

// ParseLoad parses the line of /proc/loadavg ("0.52 0.58 0.59 1/467 12345").
func ParseLoad(b []byte) (Load, error) {
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return Load{}, fmt.Errorf("procfs: loadavg %q: want three averages", b)
	}
	var v [3]float64
	for i := range v {
		x, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return Load{}, fmt.Errorf("procfs: loadavg %q: %w", b, err)
		}
		v[i] = x
	}
	return Load{One: v[0], Five: v[1], Fifteen: v[2]}, nil
}
