package procfs

import "testing"

func TestParseLoad(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Load
		ok   bool
	}{
		{"0.52 0.58 0.59 1/467 12345\n", Load{0.52, 0.58, 0.59}, true},
		{"37.54 30.43 26.26 40/900 1", Load{37.54, 30.43, 26.26}, true},
		{"0.52 0.58", Load{}, false},
		{"a b c", Load{}, false},
	} {
		got, err := ParseLoad([]byte(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseLoad(%q) = %+v, %v; want %+v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
