# The articles' kernels in Python, and the driver that serves them over the line protocol of
# package engine/driver (see ../../driver/driver.go): one request a line on stdin, one answer
# a line on stdout. The kernels follow kernels/recursion.go and kernels/loops.go.
#
# Python's ints are unbounded: every kernel's value fits int64 over the catalogue's ranges
# (fib_it(92) is the largest), and the sum over repetitions is wrapped to int64 as Go's is.
# The recursion kernels run on a thread with a 512 MiB stack and a recursion limit to match,
# so that ack(3, 10) (about 8,000 frames deep) runs; a deeper call raises RecursionError,
# answered as a stack overflow.
import re
import sys
import threading
import time

# ---- the recursion kernels (kernels/recursion.go) ----


def fib_it(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def fib_rec(n):
    if n < 3:
        return 1
    return fib_rec(n - 1) + fib_rec(n - 2)


def ack(n, m):
    if n == 0:
        return m + 1
    elif m == 0:
        return ack(n - 1, 1)
    return ack(n - 1, ack(n, m - 1))


def ack_while(n, m):
    while n != 0:
        if m == 0:
            m = 1
        else:
            m = ack_while(n, m - 1)
        n -= 1
    return m + 1


# ---- the loop kernels (kernels/loops.go) ----

SMALL_ARRAY_START = 20000


def big_array(size):
    return [i * 2 for i in range(size)]


def small_array(size):
    return [(SMALL_ARRAY_START + i) * 2 for i in range(size)]


# test1 and test1b: Python has one equality (no loose ==), and its ints are objects, as
# Go's test1 boxes them: both run the same loop.
def test1(big, small):
    array, array2 = big_array(big), small_array(small)
    total = 0
    for val in array:
        for val2 in array2:
            if val == val2:
                total += val
    return total


def test1b(big, small):
    array, array2 = big_array(big), small_array(small)
    total = 0
    for val in array:
        for val2 in array2:
            if val == val2:
                total += val
    return total


def test2(big, small):
    array, array2 = big_array(big), small_array(small)
    total = 0
    for val2 in array2:
        for val in array:
            if val == val2:
                total += val
    return total


# test3 and test4: iterate the keys, read both values by index.
def test3(big, small):
    array, array2 = big_array(big), small_array(small)
    total = 0
    for key in range(len(array)):
        for key2 in range(len(array2)):
            if array[key] == array2[key2]:
                total += array[key]
    return total


def test4(big, small):
    array, array2 = big_array(big), small_array(small)
    total = 0
    for key2 in range(len(array2)):
        for key in range(len(array)):
            if array[key] == array2[key2]:
                total += array[key]
    return total


def test5(big, small):
    array, array2 = big_array(big), small_array(small)
    total = 0
    count1, count2 = len(array), len(array2)
    key = 0
    while key < count1:
        key2 = 0
        while key2 < count2:
            if array[key] == array2[key2]:
                total += array[key]
            key2 += 1
        key += 1
    return total


def test6(big, small):
    array, array2 = big_array(big), small_array(small)
    total = 0
    count1, count2 = len(array), len(array2)
    key2 = 0
    while key2 < count2:
        key = 0
        while key < count1:
            if array[key] == array2[key2]:
                total += array[key]
            key += 1
        key2 += 1
    return total


def checksum(a):
    total = 0
    for v in a:
        total += v
    return total


# count is PHP's count(): a call per use.
def count(a):
    return len(a)


# test7: Python has no references, so each element is written back through its key as the
# loop visits it.
def test7(large):
    array = big_array(large)
    for key, val in enumerate(array):
        array[key] = val + 1
    return checksum(array)


def test8(large):
    array = big_array(large)
    key = 0
    while key < count(array):
        array[key] += 1
        key += 1
    return checksum(array)


def test8b(large):
    array = big_array(large)
    n = count(array)
    key = 0
    while key < n:
        array[key] += 1
        key += 1
    return checksum(array)


# ---- the driver ----

# A parameter's allowed range: the catalogue's (kernels/catalogue.go).
FIB_N = ("n", 0, 92)
ACK_N = ("n", 0, 3)
ACK_M = ("m", 0, 20)
BIG = ("big", 1, 1000000)
SMALL = ("small", 1, 100000)
LARGE = ("large", 1, 10000000)

KERNELS = {
    "fib_it": (fib_it, [FIB_N]),
    "fib_rec": (fib_rec, [FIB_N]),
    "ack_while": (ack_while, [ACK_N, ACK_M]),
    "ack": (ack, [ACK_N, ACK_M]),
    "test1": (test1, [BIG, SMALL]),
    "test1b": (test1b, [BIG, SMALL]),
    "test2": (test2, [BIG, SMALL]),
    "test3": (test3, [BIG, SMALL]),
    "test4": (test4, [BIG, SMALL]),
    "test5": (test5, [BIG, SMALL]),
    "test6": (test6, [BIG, SMALL]),
    "test7": (test7, [LARGE]),
    "test8": (test8, [LARGE]),
    "test8b": (test8b, [LARGE]),
}

MAX_REPS = 1000000000
USAGE = "want <kernel> <reps> <arg1> [<arg2>]"
INT = re.compile(r"^[+-]?[0-9]+$")
MASK = (1 << 64) - 1


def int64(v):
    """int64 wraps v to a signed 64-bit integer, as Go's int64 arithmetic does."""
    v &= MASK
    return v - (1 << 64) if v >= 1 << 63 else v


MAX_SAMPLES = 1000
TIMES_USAGE = "want times <kernel> <samples> <group> <arg1> [<arg2>]"


def parse(f):
    """parse checks the fields of a request, <kernel> <reps> <args...>, and returns the
    kernel's function, its name, reps and arguments, or the error answer."""
    if not f:
        return "error empty request: " + USAGE
    if len(f) < 3:
        return "error too few fields: " + USAGE
    if len(f) > 4:
        return "error too many fields: " + USAGE
    name = f[0]
    if name not in KERNELS:
        return 'error unknown kernel "%s"' % name
    fn, params = KERNELS[name]
    reps = int(f[1]) if INT.match(f[1]) else 0
    if reps < 1 or reps > MAX_REPS:
        return 'error reps "%s" is not allowed: want an integer from 1 to %d' % (f[1], MAX_REPS)
    if len(f) - 2 != len(params):
        return "error %s takes %d arguments, got %d" % (name, len(params), len(f) - 2)
    args = []
    for (pname, lo, hi), s in zip(params, f[2:]):
        if not INT.match(s):
            return 'error %s: %s = "%s" is not an integer' % (name, pname, s)
        v = int(s)
        if v < lo or v > hi:
            return 'error %s: %s = "%s" is out of range: allowed %d to %d' % (name, pname, s, lo, hi)
        args.append(v)
    return fn, name, reps, args


def failure(name, e):
    """failure is the answer to an exception a kernel raised, or None to re-raise it."""
    if isinstance(e, RecursionError):
        return "error stack overflow: %s exhausted Python's recursion limit (RecursionError: %s)" % (name, e)
    if isinstance(e, MemoryError):
        return "error %s: MemoryError: %s" % (name, e)
    return None


def serve_times(f):
    """serve_times answers "times <kernel> <samples> <group> <args...>" (f without
    "times"): samples × group calls, the clock read between every group."""
    if len(f) < 4:
        return "error too few fields: " + TIMES_USAGE
    samples = int(f[1]) if INT.match(f[1]) else 0
    if samples < 1 or samples > MAX_SAMPLES:
        return 'error samples "%s" is not allowed: want an integer from 1 to %d' % (f[1], MAX_SAMPLES)
    p = parse([f[0]] + f[2:])
    if isinstance(p, str):
        return p
    fn, name, group, args = p
    clock = time.perf_counter_ns
    times = [0] * samples
    first = None
    total = 0
    try:
        for i in range(samples):
            start = clock()
            v = fn(*args)
            part = v
            for _ in range(group - 1):
                part += fn(*args)
            times[i] = clock() - start
            if first is None:
                first = v
            total += part
    except (RecursionError, MemoryError) as e:
        return failure(name, e)
    return "times %d %d %s" % (int64(first), int64(total), " ".join(map(str, times)))


def serve(line):
    f = line.split()
    if f and f[0] == "times":
        return serve_times(f[1:])
    p = parse(f)
    if isinstance(p, str):
        return p
    fn, name, reps, args = p
    start = time.perf_counter_ns()
    try:
        first = fn(*args)
        total = first
        for _ in range(reps - 1):
            total += fn(*args)
    except (RecursionError, MemoryError) as e:
        return failure(name, e)
    elapsed = time.perf_counter_ns() - start
    return "ok %d %d %d" % (int64(first), int64(total), elapsed)


def main():
    impl = sys.implementation.name
    version = sys.version.split()[0]
    if impl == "pypy":
        v = sys.pypy_version_info
        runtime = "PyPy %d.%d.%d (Python %s)" % (v.major, v.minor, v.micro, version)
    else:
        runtime = "CPython %s" % version
    sys.stdout.write("ready python %s\n" % runtime)
    sys.stdout.flush()
    for line in sys.stdin:
        sys.stdout.write(serve(line) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    sys.setrecursionlimit(1000000)
    threading.stack_size(512 << 20)
    t = threading.Thread(target=main)
    t.start()
    t.join()
