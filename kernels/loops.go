package kernels

// The loop kernels of "For or Foreach? PHP vs. Javascript, C++, Java, HHVM".
// This file imports nothing: the yaegi engine interprets it from source, and the wasm
// module compiles it to WebAssembly, so every engine runs exactly this code.
//
// The article fills a big array with i*2 for i in [0, 50000) and a small one with i*2 for
// i in [20000, 21000), then compares every pair; a third, large array of 1,000,000 elements
// is incremented in place. PHP's empty `if ($val == $val2) {}` would be deleted by any
// optimising compiler (the article's C++ -O3 row reads 0.00000s), so here every comparison
// that matches adds the value to a checksum, and every increment is summed afterwards.
//
// Each kernel builds its arrays inside the call, so that every call is independent and
// every engine starts from the same state: for tests 1 to 6 that is 51,000 stores against
// 50,000,000 comparisons (0.1%); for tests 7 to 8b it is a fill and a checksum pass of the
// same length as the timed loop, so their absolute times are about twice the loop alone.

// smallArrayStart is where the article's small array starts: i*2 for i from 20000.
const smallArrayStart = 20000

func bigArray(size int) []int64 {
	a := make([]int64, size)
	for i := range a {
		a[i] = int64(i) * 2
	}
	return a
}

func smallArray(size int) []int64 {
	a := make([]int64, size)
	for i := range a {
		a[i] = int64(smallArrayStart+i) * 2
	}
	return a
}

// boxed returns the values as interface values: dynamically typed, like PHP's zvals.
func boxed(a []int64) []any {
	b := make([]any, len(a))
	for i, v := range a {
		b[i] = v
	}
	return b
}

// Test1 is "foreach big-array (foreach small-array)" with PHP's loose `==`. Go has no
// loose comparison; its closest analogue is comparing dynamically typed values: both
// arrays hold interface values (as PHP arrays hold zvals) and `==` checks the dynamic
// type before the value. Test1b is the same loop on typed values.
func Test1(big, small int) int64 {
	array, array2 := boxed(bigArray(big)), boxed(smallArray(small))
	var sum int64
	for _, val := range array {
		for _, val2 := range array2 {
			if val == val2 {
				sum += val.(int64)
			}
		}
	}
	return sum
}

// Test1b is "foreach big-array (foreach small-array)" with PHP's strict `===`: in Go,
// a plain comparison of int64 values.
func Test1b(big, small int) int64 {
	array, array2 := bigArray(big), smallArray(small)
	var sum int64
	for _, val := range array {
		for _, val2 := range array2 {
			if val == val2 {
				sum += val
			}
		}
	}
	return sum
}

// Test2 is "foreach small-array (foreach big-array)": Test1b with the loops swapped.
func Test2(big, small int) int64 {
	array, array2 := bigArray(big), smallArray(small)
	var sum int64
	for _, val2 := range array2 {
		for _, val := range array {
			if val == val2 {
				sum += val
			}
		}
	}
	return sum
}

// Test3 is "foreach big-array (foreach small-array) with key lookup": range over the
// keys and read both values by index.
func Test3(big, small int) int64 {
	array, array2 := bigArray(big), smallArray(small)
	var sum int64
	for key := range array {
		for key2 := range array2 {
			if array[key] == array2[key2] {
				sum += array[key]
			}
		}
	}
	return sum
}

// Test4 is "foreach small-array (foreach big-array) with key lookup". The article's PHP
// reads $array[$key] and $array2[$key2] with $key2 undefined (a typo); this is the loop
// it meant: Test3 with the loops swapped.
func Test4(big, small int) int64 {
	array, array2 := bigArray(big), smallArray(small)
	var sum int64
	for key2 := range array2 {
		for key := range array {
			if array[key] == array2[key2] {
				sum += array[key]
			}
		}
	}
	return sum
}

// Test5 is "for big-array (for small-array)": counted loops with the lengths read once.
func Test5(big, small int) int64 {
	array, array2 := bigArray(big), smallArray(small)
	var sum int64
	count, count2 := len(array), len(array2)
	for key := 0; key < count; key++ {
		for key2 := 0; key2 < count2; key2++ {
			if array[key] == array2[key2] {
				sum += array[key]
			}
		}
	}
	return sum
}

// Test6 is "for small-array (for big-array)": Test5 with the loops swapped.
func Test6(big, small int) int64 {
	array, array2 := bigArray(big), smallArray(small)
	var sum int64
	count, count2 := len(array), len(array2)
	for key2 := 0; key2 < count2; key2++ {
		for key := 0; key < count; key++ {
			if array[key] == array2[key2] {
				sum += array[key]
			}
		}
	}
	return sum
}

// Test7 is "foreach big-array" by reference (`foreach ($array as &$val) $val++`): each
// element is incremented through a pointer to it.
func Test7(large int) int64 {
	array := bigArray(large)
	for key := range array {
		val := &array[key]
		*val++
	}
	return checksum(array)
}

// Test8 is "for big-array" with `count($array)` in the loop condition. Go's len is a field
// read that the compiler hoists, so it would measure nothing; the analogue of PHP's
// function call is a call to count, kept out of line, on every iteration.
func Test8(large int) int64 {
	array := bigArray(large)
	for key := 0; key < count(array); key++ {
		array[key]++
	}
	return checksum(array)
}

// Test8b is "for big-array, doing count() outside the loop": the length is read once.
func Test8b(large int) int64 {
	array := bigArray(large)
	n := count(array)
	for key := 0; key < n; key++ {
		array[key]++
	}
	return checksum(array)
}

// count is PHP's count(): a real call, never inlined, so Test8 pays for one per iteration.
//
//go:noinline
func count(a []int64) int {
	return len(a)
}

func checksum(a []int64) int64 {
	var sum int64
	for _, v := range a {
		sum += v
	}
	return sum
}
