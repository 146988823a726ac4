// The examples of the "Your kernel" tab: the template, the articles' kernels as a user
// would write them, and two classics.

/** One example: its title, its source and the arguments to run it with. */
export interface Example {
  title: string;
  source: string;
  args: Record<string, string>;
}

export const TEMPLATE: Example = {
  title: "Template: a sum in a loop",
  source: `package kernel

// Sum adds the numbers from 1 to n: edit it, or pick an example.
// A kernel is one exported function of integer parameters (int, int32, int64)
// returning int64; it may import math, sort, strings and other packages that compute.
func Sum(n int) int64 {
	var s int64
	for i := 1; i <= n; i++ {
		s += int64(i)
	}
	return s
}
`,
  args: { n: "1000000" },
};

export const EXAMPLES: Example[] = [
  TEMPLATE,
  {
    title: "fib_rec: Fibonacci by naive recursion (the recursion article)",
    source: `package kernel

// FibRec is the article's fib_rec: naive double recursion.
func FibRec(n int) int64 {
	if n < 3 {
		return 1
	}
	return FibRec(n-1) + FibRec(n-2)
}
`,
    args: { n: "27" },
  },
  {
    title: "ack: Ackermann by double recursion (the recursion article)",
    source: `package kernel

// Ack is the article's ack.
func Ack(n, m int) int64 {
	if n == 0 {
		return int64(m) + 1
	} else if m == 0 {
		return Ack(n-1, 1)
	}
	return Ack(n-1, int(Ack(n, m-1)))
}
`,
    args: { n: "3", m: "6" },
  },
  {
    title: "test5: for big (for small) (the loops article)",
    source: `package kernel

// Test5 is the article's test5: two arrays of even numbers, the matches summed.
func Test5(big, small int) int64 {
	a := make([]int64, big)
	for i := range a {
		a[i] = int64(i) * 2
	}
	b := make([]int64, small)
	for i := range b {
		b[i] = int64(i+20000) * 2
	}
	var sum int64
	for i := 0; i < len(a); i++ {
		for j := 0; j < len(b); j++ {
			if a[i] == b[j] {
				sum += a[i]
			}
		}
	}
	return sum
}
`,
    args: { big: "20000", small: "500" },
  },
  {
    title: "Sieve of Eratosthenes: the primes below n",
    source: SIEVE(),
    args: { n: "1000000" },
  },
  {
    title: "Matrix product: n×n, checksum of the result",
    source: `package kernel

// MatMul multiplies two n×n matrices of small integers and sums the product.
func MatMul(n int) int64 {
	a := make([]int64, n*n)
	b := make([]int64, n*n)
	for i := range a {
		a[i] = int64(i % 7)
		b[i] = int64(i % 5)
	}
	c := make([]int64, n*n)
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			aik := a[i*n+k]
			for j := 0; j < n; j++ {
				c[i*n+j] += aik * b[k*n+j]
			}
		}
	}
	var sum int64
	for _, v := range c {
		sum += v
	}
	return sum
}
`,
    args: { n: "200" },
  },
];

/** SIEVE is the sieve example's source (the browser test types it too). */
export function SIEVE(): string {
  return `package kernel

// Primes counts the primes below n with the sieve of Eratosthenes.
func Primes(n int) int64 {
	composite := make([]bool, n)
	var count int64
	for i := 2; i < n; i++ {
		if composite[i] {
			continue
		}
		count++
		for j := i * i; j < n; j += i {
			composite[j] = true
		}
	}
	return count
}
`;
}
