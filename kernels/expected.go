package kernels

// The expected results, computed by methods independent of the kernels themselves.

// fibDoubling computes fib(n) by the fast-doubling identities
// fib(2k) = fib(k)·(2·fib(k+1) − fib(k)) and fib(2k+1) = fib(k)² + fib(k+1)².
func fibDoubling(n int) int64 {
	a, b := int64(0), int64(1) // fib(0), fib(1)
	for bit := 62; bit >= 0; bit-- {
		c := a * (2*b - a)
		d := a*a + b*b
		if n>>uint(bit)&1 == 1 {
			a, b = d, c+d
		} else {
			a, b = c, d
		}
	}
	return a
}

// ackClosedForm is the Ackermann function for n ≤ 3 in closed form:
// A(0,m) = m+1, A(1,m) = m+2, A(2,m) = 2m+3, A(3,m) = 2^(m+3) − 3.
func ackClosedForm(n, m int) int64 {
	switch n {
	case 0:
		return int64(m) + 1
	case 1:
		return int64(m) + 2
	case 2:
		return 2*int64(m) + 3
	case 3:
		return int64(1)<<(m+3) - 3
	}
	panic("ackClosedForm: n > 3 has no closed form here; the catalogue allows n from 0 to 3")
}

// expectedMatches is the checksum of the pair loops: the sum of the values the two arrays
// share. big holds 2i for i in [0, big) and small holds 2i for i in [20000, 20000+small),
// so they share 2i for i in [20000, min(big, 20000+small)), an arithmetic series.
func expectedMatches(big, small int) int64 {
	lo, hi := int64(smallArrayStart), int64(min(big, smallArrayStart+small))
	if hi <= lo {
		return 0
	}
	// sum of 2i for i in [lo, hi) = (hi-lo)(lo+hi-1)
	return (hi - lo) * (lo + hi - 1)
}
