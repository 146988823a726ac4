package kernels

// The recursion kernels of "Recursion with PHP 7, HHVM 3.8, Javascript, Java and C/C++".
// This file imports nothing: the yaegi engine interprets it from source, and the wasm
// module compiles it to WebAssembly, so every engine runs exactly this code.

// FibIt returns the n-th Fibonacci number, computed with a loop (the article's fib_it).
// Results past n = 92 wrap around int64, as the article's C version wraps unsigned int.
func FibIt(n int) int64 {
	var a, b int64 = 0, 1
	for i := 0; i < n; i++ {
		sum := a + b
		a = b
		b = sum
	}
	return a
}

// FibRec returns the n-th Fibonacci number by naive double recursion (the article's
// fib_rec): fib_rec(n) = 1 for n < 3. fib_rec(40) makes 204,668,309 calls.
func FibRec(n int) int64 {
	if n < 3 {
		return 1
	}
	return FibRec(n-1) + FibRec(n-2)
}

// Ack is the Ackermann function, recursing on both arguments (the article's ack).
// ack(3, m) recurses about 2^(m+3) calls deep: ack(3, 10) is the article's stack test.
func Ack(n, m int) int64 {
	if n == 0 {
		return int64(m) + 1
	} else if m == 0 {
		return Ack(n-1, 1)
	}
	return Ack(n-1, int(Ack(n, m-1)))
}

// AckWhile is the Ackermann function with the outer recursion turned into a loop (the
// article's ack_while): the same result as Ack with half the call depth.
func AckWhile(n, m int) int64 {
	for n != 0 {
		if m == 0 {
			m = 1
		} else {
			m = int(AckWhile(n, m-1))
		}
		n--
	}
	return int64(m) + 1
}
