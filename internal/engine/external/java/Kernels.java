// The articles' kernels in Java, and the peer driver that serves them over the line
// protocol of package peers (see ../peers.go): one request a line on stdin, one answer a
// line on stdout. The kernels follow kernels/recursion.go and kernels/loops.go line for
// line, with long where Go has int64 and int.

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

public final class Kernels {
    // ---- the recursion kernels (kernels/recursion.go) ----

    // n is an int, as in the article's Java: C2 optimises int-counted loops best (n <= 92).
    static long fibIt(int n) {
        long a = 0, b = 1;
        for (int i = 0; i < n; i++) {
            long sum = a + b;
            a = b;
            b = sum;
        }
        return a;
    }

    static long fibRec(int n) {
        if (n < 3) return 1;
        return fibRec(n - 1) + fibRec(n - 2);
    }

    static long ack(long n, long m) {
        if (n == 0) return m + 1;
        else if (m == 0) return ack(n - 1, 1);
        return ack(n - 1, ack(n, m - 1));
    }

    static long ackWhile(long n, long m) {
        while (n != 0) {
            if (m == 0) m = 1;
            else m = ackWhile(n, m - 1);
            n--;
        }
        return m + 1;
    }

    // ---- the loop kernels (kernels/loops.go) ----

    static final int SMALL_ARRAY_START = 20000;

    static long[] bigArray(int size) {
        long[] a = new long[size];
        for (int i = 0; i < size; i++) a[i] = (long) i * 2;
        return a;
    }

    static long[] smallArray(int size) {
        long[] a = new long[size];
        for (int i = 0; i < size; i++) a[i] = (long) (SMALL_ARRAY_START + i) * 2;
        return a;
    }

    // boxed returns the values as objects: dynamically typed, like PHP's zvals.
    static Object[] boxed(long[] a) {
        Object[] b = new Object[a.length];
        for (int i = 0; i < a.length; i++) b[i] = a[i];
        return b;
    }

    // test1 compares dynamically typed values, as Go compares interface values: equals
    // checks the dynamic type before the value (== on two boxed Longs would compare
    // references).
    static long test1(int big, int small) {
        Object[] array = boxed(bigArray(big)), array2 = boxed(smallArray(small));
        long sum = 0;
        for (Object val : array) {
            for (Object val2 : array2) {
                if (val.equals(val2)) sum += (Long) val;
            }
        }
        return sum;
    }

    static long test1b(int big, int small) {
        long[] array = bigArray(big), array2 = smallArray(small);
        long sum = 0;
        for (long val : array) {
            for (long val2 : array2) {
                if (val == val2) sum += val;
            }
        }
        return sum;
    }

    static long test2(int big, int small) {
        long[] array = bigArray(big), array2 = smallArray(small);
        long sum = 0;
        for (long val2 : array2) {
            for (long val : array) {
                if (val == val2) sum += val;
            }
        }
        return sum;
    }

    // test3 and test4: Java's foreach has no keys, so the keys are an index over the length.
    static long test3(int big, int small) {
        long[] array = bigArray(big), array2 = smallArray(small);
        long sum = 0;
        for (int key = 0; key < array.length; key++) {
            for (int key2 = 0; key2 < array2.length; key2++) {
                if (array[key] == array2[key2]) sum += array[key];
            }
        }
        return sum;
    }

    static long test4(int big, int small) {
        long[] array = bigArray(big), array2 = smallArray(small);
        long sum = 0;
        for (int key2 = 0; key2 < array2.length; key2++) {
            for (int key = 0; key < array.length; key++) {
                if (array[key] == array2[key2]) sum += array[key];
            }
        }
        return sum;
    }

    static long test5(int big, int small) {
        long[] array = bigArray(big), array2 = smallArray(small);
        long sum = 0;
        int count = array.length, count2 = array2.length;
        for (int key = 0; key < count; key++) {
            for (int key2 = 0; key2 < count2; key2++) {
                if (array[key] == array2[key2]) sum += array[key];
            }
        }
        return sum;
    }

    static long test6(int big, int small) {
        long[] array = bigArray(big), array2 = smallArray(small);
        long sum = 0;
        int count = array.length, count2 = array2.length;
        for (int key2 = 0; key2 < count2; key2++) {
            for (int key = 0; key < count; key++) {
                if (array[key] == array2[key2]) sum += array[key];
            }
        }
        return sum;
    }

    // test7: Java has no references to array elements; each is written back by its key.
    static long test7(int large) {
        long[] array = bigArray(large);
        for (int key = 0; key < array.length; key++) array[key]++;
        return checksum(array);
    }

    // count is PHP's count(): the driver's command line keeps the JIT from inlining it
    // (-XX:CompileCommand=dontinline), as Go's count is //go:noinline.
    static int count(long[] a) {
        return a.length;
    }

    static long test8(int large) {
        long[] array = bigArray(large);
        for (int key = 0; key < count(array); key++) array[key]++;
        return checksum(array);
    }

    static long test8b(int large) {
        long[] array = bigArray(large);
        int n = count(array);
        for (int key = 0; key < n; key++) array[key]++;
        return checksum(array);
    }

    static long checksum(long[] a) {
        long sum = 0;
        for (long v : a) sum += v;
        return sum;
    }

    // ---- the driver ----

    // A parameter's allowed range: the catalogue's (kernels/catalogue.go).
    record Param(String name, long min, long max) {}

    static final Param FIB_N = new Param("n", 0, 92), ACK_N = new Param("n", 0, 3),
            ACK_M = new Param("m", 0, 20), BIG = new Param("big", 1, 1_000_000),
            SMALL = new Param("small", 1, 100_000), LARGE = new Param("large", 1, 10_000_000);

    static Param[] params(String kernel) {
        switch (kernel) {
            case "fib_it": case "fib_rec": return new Param[] {FIB_N};
            case "ack": case "ack_while": return new Param[] {ACK_N, ACK_M};
            case "test1": case "test1b": case "test2": case "test3": case "test4":
            case "test5": case "test6": return new Param[] {BIG, SMALL};
            case "test7": case "test8": case "test8b": return new Param[] {LARGE};
            default: return null;
        }
    }

    // The arguments are read from volatile fields on every repetition, so that the JIT
    // cannot see that the calls repeat; the sum of all results is printed.
    static volatile long argA, argB;

    // A kernel as the driver calls it, resolved once per request.
    interface Call {
        long call(long a, long b);
    }

    static Call resolve(String kernel) {
        switch (kernel) {
            case "fib_it": return (a, b) -> fibIt((int) a);
            case "fib_rec": return (a, b) -> fibRec((int) a);
            case "ack": return Kernels::ack;
            case "ack_while": return Kernels::ackWhile;
            case "test1": return (a, b) -> test1((int) a, (int) b);
            case "test1b": return (a, b) -> test1b((int) a, (int) b);
            case "test2": return (a, b) -> test2((int) a, (int) b);
            case "test3": return (a, b) -> test3((int) a, (int) b);
            case "test4": return (a, b) -> test4((int) a, (int) b);
            case "test5": return (a, b) -> test5((int) a, (int) b);
            case "test6": return (a, b) -> test6((int) a, (int) b);
            case "test7": return (a, b) -> test7((int) a);
            case "test8": return (a, b) -> test8((int) a);
            case "test8b": return (a, b) -> test8b((int) a);
            default: throw new IllegalArgumentException("unknown kernel " + kernel);
        }
    }

    static final long MAX_REPS = 1_000_000_000L;
    static final String USAGE = "want <kernel> <reps> <arg1> [<arg2>]";

    static final int MAX_SAMPLES = 1000;
    static final String TIMES_USAGE = "want times <kernel> <samples> <group> <arg1> [<arg2>]";

    /** A checked request: the kernel, its reps and its arguments (argA, argB set). */
    record Request(String kernel, Call call, long reps) {}

    /** Checks a request's fields, kernel reps args..., from index at: a Request, or the error answer. */
    static Object parse(String[] f, int at) {
        int n = f.length - at;
        if (n < 3) return "error too few fields: " + USAGE;
        if (n > 4) return "error too many fields: " + USAGE;
        String kernel = f[at];
        Param[] ps = params(kernel);
        if (ps == null) return "error unknown kernel \"" + kernel + "\"";
        long reps;
        try {
            reps = Long.parseLong(f[at + 1]);
        } catch (NumberFormatException e) {
            reps = 0;
        }
        if (reps < 1 || reps > MAX_REPS) {
            return "error reps \"" + f[at + 1] + "\" is not allowed: want an integer from 1 to " + MAX_REPS;
        }
        if (n - 2 != ps.length) {
            return "error " + kernel + " takes " + ps.length + " arguments, got " + (n - 2);
        }
        long[] args = new long[2];
        for (int i = 0; i < ps.length; i++) {
            Param p = ps[i];
            String s = f[at + 2 + i];
            try {
                args[i] = Long.parseLong(s);
            } catch (NumberFormatException e) {
                return "error " + kernel + ": " + p.name() + " = \"" + s + "\" is not an integer";
            }
            if (args[i] < p.min() || args[i] > p.max()) {
                return "error " + kernel + ": " + p.name() + " = \"" + s + "\" is out of range: allowed "
                        + p.min() + " to " + p.max();
            }
        }
        argA = args[0];
        argB = args[1];
        return new Request(kernel, resolve(kernel), reps);
    }

    /** Answers "times kernel samples group args...": samples × group calls, the clock read between every group. */
    static String serveTimes(String[] f) {
        if (f.length < 5) return "error too few fields: " + TIMES_USAGE;
        int samples;
        try {
            samples = Integer.parseInt(f[2]);
        } catch (NumberFormatException e) {
            samples = 0;
        }
        if (samples < 1 || samples > MAX_SAMPLES) {
            return "error samples \"" + f[2] + "\" is not allowed: want an integer from 1 to " + MAX_SAMPLES;
        }
        String[] g = new String[f.length - 2];
        g[0] = f[1];
        System.arraycopy(f, 3, g, 1, f.length - 3);
        Object parsed = parse(g, 0);
        if (parsed instanceof String answer) return answer;
        Request r = (Request) parsed;
        long[] times = new long[samples];
        long first = 0, sum = 0;
        try {
            for (int i = 0; i < samples; i++) {
                long start = System.nanoTime();
                for (long c = 0; c < r.reps(); c++) {
                    long v = r.call().call(argA, argB);
                    if (i == 0 && c == 0) first = v;
                    sum += v;
                }
                times[i] = System.nanoTime() - start;
            }
        } catch (StackOverflowError e) {
            return "error stack overflow: " + r.kernel() + " exhausted the thread's stack (StackOverflowError)";
        } catch (OutOfMemoryError e) {
            return "error out of memory: " + e.getMessage();
        }
        StringBuilder b = new StringBuilder("times ").append(first).append(' ').append(sum);
        for (long t : times) b.append(' ').append(t);
        return b.toString();
    }

    static String serve(String line) {
        String[] f = line.trim().split("[ \t]+");
        if (f[0].equals("times")) return serveTimes(f);
        Object parsed = parse(f, 0);
        if (parsed instanceof String answer) return answer;
        Request r = (Request) parsed;
        Call k = r.call();
        long reps = r.reps();
        long first = 0, sum = 0;
        long start = System.nanoTime();
        try {
            for (long i = 0; i < reps; i++) {
                long v = k.call(argA, argB);
                if (i == 0) first = v;
                sum += v;
            }
        } catch (StackOverflowError e) {
            return "error stack overflow: " + r.kernel() + " exhausted the thread's stack (StackOverflowError)";
        } catch (OutOfMemoryError e) {
            return "error out of memory: " + e.getMessage();
        }
        long elapsed = System.nanoTime() - start;
        return "ok " + first + " " + sum + " " + elapsed;
    }

    static void loop() {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        out.println("ready java " + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        out.flush();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isBlank()) {
                    out.println("error empty request: " + USAGE);
                } else {
                    out.println(serve(line));
                }
                out.flush();
            }
        } catch (IOException e) {
            System.err.println("read stdin: " + e);
            System.exit(1);
        }
    }

    // The stack of the thread that runs the kernels: Go's goroutine stacks grow to 1 GB,
    // and the kernels' depth (ack(3, m) is about 2^(m+3) calls deep) needs more than
    // the JVM's default of 1 MB. The size is a request the JVM may round.
    static final long STACK_BYTES = 1L << 30;

    public static void main(String[] argv) throws InterruptedException {
        Thread t = new Thread(null, Kernels::loop, "kernels", STACK_BYTES);
        t.start();
        t.join();
    }
}
