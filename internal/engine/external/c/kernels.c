/*
 * The articles' kernels in C, and the peer driver that serves them over the line protocol
 * of package peers (see ../peers.go): one request a line on stdin, one answer a line on
 * stdout.
 *
 * The same file is compiled natively (gcc -O2, the "c" peer) and to wasm32-wasi (clang,
 * the "c-wasm" peer, run by wazero). The kernels follow kernels/recursion.go and
 * kernels/loops.go line for line, with int64_t where Go has int64 and int.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef __wasi__
#include <setjmp.h>
#include <signal.h>
#endif

#define NOINLINE __attribute__((noinline))

/* ---- the recursion kernels (kernels/recursion.go) ---- */

/* fib_it: unsigned arithmetic so that a wrap past n = 92 is defined, as Go's int64 wraps. */
static int64_t fib_it(int64_t n) {
	uint64_t a = 0, b = 1;
	for (int64_t i = 0; i < n; i++) {
		uint64_t sum = a + b;
		a = b;
		b = sum;
	}
	return (int64_t)a;
}

static int64_t fib_rec(int64_t n) {
	if (n < 3) return 1;
	return fib_rec(n - 1) + fib_rec(n - 2);
}

static int64_t ack(int64_t n, int64_t m) {
	if (n == 0) return m + 1;
	else if (m == 0) return ack(n - 1, 1);
	return ack(n - 1, ack(n, m - 1));
}

static int64_t ack_while(int64_t n, int64_t m) {
	while (n != 0) {
		if (m == 0) m = 1;
		else m = ack_while(n, m - 1);
		n--;
	}
	return m + 1;
}

/* ---- the loop kernels (kernels/loops.go) ---- */

#define SMALL_ARRAY_START 20000

static int64_t *big_array(int64_t size) {
	int64_t *a = malloc((size_t)size * sizeof *a);
	if (!a) { fputs("error out of memory\n", stdout); fflush(stdout); exit(3); }
	for (int64_t i = 0; i < size; i++) a[i] = i * 2;
	return a;
}

static int64_t *small_array(int64_t size) {
	int64_t *a = malloc((size_t)size * sizeof *a);
	if (!a) { fputs("error out of memory\n", stdout); fflush(stdout); exit(3); }
	for (int64_t i = 0; i < size; i++) a[i] = (SMALL_ARRAY_START + i) * 2;
	return a;
}

static int64_t checksum(const int64_t *a, int64_t n) {
	int64_t sum = 0;
	for (int64_t i = 0; i < n; i++) sum += a[i];
	return sum;
}

/*
 * test1 compares dynamically typed values in Go (interface values, as PHP's loose ==
 * compares zvals). C has no dynamic typing: test1 is the typed loop, the same as test1b.
 * "foreach" in C is a pointer walking the array.
 */
static int64_t test1(int64_t big, int64_t small) {
	int64_t *array = big_array(big), *array2 = small_array(small);
	int64_t sum = 0;
	for (const int64_t *val = array; val < array + big; val++)
		for (const int64_t *val2 = array2; val2 < array2 + small; val2++)
			if (*val == *val2) sum += *val;
	free(array); free(array2);
	return sum;
}

static int64_t test1b(int64_t big, int64_t small) {
	int64_t *array = big_array(big), *array2 = small_array(small);
	int64_t sum = 0;
	for (const int64_t *val = array; val < array + big; val++)
		for (const int64_t *val2 = array2; val2 < array2 + small; val2++)
			if (*val == *val2) sum += *val;
	free(array); free(array2);
	return sum;
}

static int64_t test2(int64_t big, int64_t small) {
	int64_t *array = big_array(big), *array2 = small_array(small);
	int64_t sum = 0;
	for (const int64_t *val2 = array2; val2 < array2 + small; val2++)
		for (const int64_t *val = array; val < array + big; val++)
			if (*val == *val2) sum += *val;
	free(array); free(array2);
	return sum;
}

/* test3 and test4: range over the keys, read both values by index. */
static int64_t test3(int64_t big, int64_t small) {
	int64_t *array = big_array(big), *array2 = small_array(small);
	int64_t sum = 0;
	for (int64_t key = 0; key < big; key++)
		for (int64_t key2 = 0; key2 < small; key2++)
			if (array[key] == array2[key2]) sum += array[key];
	free(array); free(array2);
	return sum;
}

static int64_t test4(int64_t big, int64_t small) {
	int64_t *array = big_array(big), *array2 = small_array(small);
	int64_t sum = 0;
	for (int64_t key2 = 0; key2 < small; key2++)
		for (int64_t key = 0; key < big; key++)
			if (array[key] == array2[key2]) sum += array[key];
	free(array); free(array2);
	return sum;
}

/* test5 and test6: counted loops with the lengths read once. */
static int64_t test5(int64_t big, int64_t small) {
	int64_t *array = big_array(big), *array2 = small_array(small);
	int64_t sum = 0;
	int64_t count = big, count2 = small;
	for (int64_t key = 0; key < count; key++)
		for (int64_t key2 = 0; key2 < count2; key2++)
			if (array[key] == array2[key2]) sum += array[key];
	free(array); free(array2);
	return sum;
}

static int64_t test6(int64_t big, int64_t small) {
	int64_t *array = big_array(big), *array2 = small_array(small);
	int64_t sum = 0;
	int64_t count = big, count2 = small;
	for (int64_t key2 = 0; key2 < count2; key2++)
		for (int64_t key = 0; key < count; key++)
			if (array[key] == array2[key2]) sum += array[key];
	free(array); free(array2);
	return sum;
}

/* test7: each element incremented through a pointer to it, as Go's Test7. */
static int64_t test7(int64_t large) {
	int64_t *array = big_array(large);
	for (int64_t key = 0; key < large; key++) {
		int64_t *val = &array[key];
		(*val)++;
	}
	int64_t sum = checksum(array, large);
	free(array);
	return sum;
}

/* An array with its length, so that count() has something to read. */
struct array {
	int64_t *data;
	int64_t len;
};

/* count is PHP's count(): a real call, never inlined, as Go's count. */
static NOINLINE int64_t count(const struct array *a) { return a->len; }

static int64_t test8(int64_t large) {
	struct array array = {big_array(large), large};
	for (int64_t key = 0; key < count(&array); key++) array.data[key]++;
	int64_t sum = checksum(array.data, large);
	free(array.data);
	return sum;
}

static int64_t test8b(int64_t large) {
	struct array array = {big_array(large), large};
	int64_t n = count(&array);
	for (int64_t key = 0; key < n; key++) array.data[key]++;
	int64_t sum = checksum(array.data, large);
	free(array.data);
	return sum;
}

/* ---- the driver ---- */

/* A parameter's allowed range: the catalogue's (kernels/catalogue.go). */
struct param {
	const char *name;
	int64_t min, max;
};

static const struct param FIB_N = {"n", 0, 92}, ACK_N = {"n", 0, 3}, ACK_M = {"m", 0, 20},
			  BIG = {"big", 1, 1000000}, SMALL = {"small", 1, 100000},
			  LARGE = {"large", 1, 10000000};

struct kernel {
	const char *name;
	int nparams;
	const struct param *params[2];
	int64_t (*f1)(int64_t);
	int64_t (*f2)(int64_t, int64_t);
};

static const struct kernel KERNELS[] = {
	{"fib_it", 1, {&FIB_N}, fib_it, NULL},
	{"fib_rec", 1, {&FIB_N}, fib_rec, NULL},
	{"ack_while", 2, {&ACK_N, &ACK_M}, NULL, ack_while},
	{"ack", 2, {&ACK_N, &ACK_M}, NULL, ack},
	{"test1", 2, {&BIG, &SMALL}, NULL, test1},
	{"test1b", 2, {&BIG, &SMALL}, NULL, test1b},
	{"test2", 2, {&BIG, &SMALL}, NULL, test2},
	{"test3", 2, {&BIG, &SMALL}, NULL, test3},
	{"test4", 2, {&BIG, &SMALL}, NULL, test4},
	{"test5", 2, {&BIG, &SMALL}, NULL, test5},
	{"test6", 2, {&BIG, &SMALL}, NULL, test6},
	{"test7", 1, {&LARGE}, test7, NULL},
	{"test8", 1, {&LARGE}, test8, NULL},
	{"test8b", 1, {&LARGE}, test8b, NULL},
};

#define NKERNELS (sizeof KERNELS / sizeof KERNELS[0])
#define MAX_REPS 1000000000LL

/*
 * The arguments are read through volatile variables on every repetition, so that the
 * compiler cannot see that the calls repeat and hoist a pure call out of the loop; the
 * sum of all results is printed, so that no call is dead.
 */
static volatile int64_t arg_a, arg_b;

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#ifndef __wasi__
/* A stack overflow raises SIGSEGV on the guard page; the handler runs on its own stack
 * and jumps back to the request loop, which answers "error stack overflow". */
static sigjmp_buf overflow_jump;
static volatile sig_atomic_t in_call;

static void on_segv(int sig) {
	if (in_call) siglongjmp(overflow_jump, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void catch_overflow(void) {
	static char altstack[1 << 16];
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
	sigaltstack(&ss, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
}
#endif

/* parse_int reads a decimal integer token, returning 0 on success. */
static int parse_int(const char *s, int64_t *out) {
	if (*s == '\0') return -1;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0') return -1;
	*out = v;
	return 0;
}

/* calls makes reps calls, returning the wrapped sum of their values and the first value
 * in *first. */
static NOINLINE uint64_t calls(const struct kernel *k, int64_t reps, int64_t *first) {
	uint64_t sum = 0;
	for (int64_t r = 0; r < reps; r++) {
		int64_t v = k->f1 ? k->f1(arg_a) : k->f2(arg_a, arg_b);
		if (r == 0) *first = v;
		sum += (uint64_t)v;
	}
	return sum;
}

/* run makes reps calls and answers with the first value, the wrapped sum and the time. */
static void run(const struct kernel *k, int64_t reps, const int64_t args[2]) {
	arg_a = args[0];
	arg_b = args[1];
#ifndef __wasi__
	if (sigsetjmp(overflow_jump, 1) != 0) {
		in_call = 0;
		printf("error stack overflow: %s exhausted the C stack\n", k->name);
		return;
	}
	in_call = 1;
#endif
	int64_t first = 0;
	int64_t start = now_ns();
	uint64_t sum = calls(k, reps, &first);
	int64_t elapsed = now_ns() - start;
#ifndef __wasi__
	in_call = 0;
#endif
	printf("ok %" PRId64 " %" PRId64 " %" PRId64 "\n", first, (int64_t)sum, elapsed);
}

#define USAGE "want <kernel> <reps> <arg1> [<arg2>]"
#define TIMES_USAGE "want times <kernel> <samples> <group> <arg1> [<arg2>]"
#define MAX_SAMPLES 1000

/* parse checks a request's tokens, <kernel> <reps> <args...>: the kernel, with *reps and
 * args set, or NULL after it printed the error answer. */
static const struct kernel *parse(char **tokens, int n, int64_t *reps, int64_t args[2]) {
	if (n == 0) { puts("error empty request: " USAGE); return NULL; }
	if (n < 3) { puts("error too few fields: " USAGE); return NULL; }
	if (n > 4) { puts("error too many fields: " USAGE); return NULL; }
	const struct kernel *k = NULL;
	for (size_t i = 0; i < NKERNELS; i++)
		if (strcmp(KERNELS[i].name, tokens[0]) == 0) k = &KERNELS[i];
	if (!k) { printf("error unknown kernel \"%s\"\n", tokens[0]); return NULL; }
	if (parse_int(tokens[1], reps) != 0 || *reps < 1 || *reps > MAX_REPS) {
		printf("error reps \"%s\" is not allowed: want an integer from 1 to %lld\n", tokens[1], MAX_REPS);
		return NULL;
	}
	if (n - 2 != k->nparams) {
		printf("error %s takes %d arguments, got %d\n", k->name, k->nparams, n - 2);
		return NULL;
	}
	for (int i = 0; i < k->nparams; i++) {
		const struct param *p = k->params[i];
		if (parse_int(tokens[2 + i], &args[i]) != 0) {
			printf("error %s: %s = \"%s\" is not an integer\n", k->name, p->name, tokens[2 + i]);
			return NULL;
		}
		if (args[i] < p->min || args[i] > p->max) {
			printf("error %s: %s = \"%s\" is out of range: allowed %" PRId64 " to %" PRId64 "\n",
			       k->name, p->name, tokens[2 + i], p->min, p->max);
			return NULL;
		}
	}
	return k;
}

/* run_times answers "times <kernel> <samples> <group> <args...>": samples × group calls,
 * the clock read between every group. */
static void run_times(char **tokens, int n) {
	static int64_t times[MAX_SAMPLES];
	if (n < 5) { puts("error too few fields: " TIMES_USAGE); return; }
	int64_t samples;
	if (parse_int(tokens[2], &samples) != 0 || samples < 1 || samples > MAX_SAMPLES) {
		printf("error samples \"%s\" is not allowed: want an integer from 1 to %d\n", tokens[2], MAX_SAMPLES);
		return;
	}
	char *rest[4] = {tokens[1], tokens[3], n > 4 ? tokens[4] : NULL, n > 5 ? tokens[5] : NULL};
	int64_t group, args[2] = {0, 0};
	const struct kernel *k = parse(rest, n - 2, &group, args);
	if (!k) return;
	arg_a = args[0];
	arg_b = args[1];
#ifndef __wasi__
	if (sigsetjmp(overflow_jump, 1) != 0) {
		in_call = 0;
		printf("error stack overflow: %s exhausted the C stack\n", k->name);
		return;
	}
	in_call = 1;
#endif
	int64_t first = 0, v = 0;
	uint64_t sum = 0;
	for (int64_t i = 0; i < samples; i++) {
		int64_t start = now_ns();
		sum += calls(k, group, &v);
		times[i] = now_ns() - start;
		if (i == 0) first = v;
	}
#ifndef __wasi__
	in_call = 0;
#endif
	printf("times %" PRId64 " %" PRId64, first, (int64_t)sum);
	for (int64_t i = 0; i < samples; i++) printf(" %" PRId64, times[i]);
	putchar('\n');
}

static void serve(char *line) {
	char *tokens[6];
	int n = 0;
	for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
		if (n == 6) { puts("error too many fields: " USAGE); return; }
		tokens[n++] = tok;
	}
	if (n > 0 && strcmp(tokens[0], "times") == 0) {
		run_times(tokens, n);
		return;
	}
	int64_t reps, args[2] = {0, 0};
	const struct kernel *k = parse(tokens, n, &reps, args);
	if (k) run(k, reps, args);
}

int main(void) {
#ifndef __wasi__
	catch_overflow();
#endif
#if defined(__wasi__)
	printf("ready c clang %d.%d.%d wasm32-wasi\n", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__clang__)
	printf("ready c clang %d.%d.%d\n", __clang_major__, __clang_minor__, __clang_patchlevel__);
#else
	printf("ready c gcc %s\n", __VERSION__);
#endif
	fflush(stdout);
	char line[512];
	while (fgets(line, sizeof line, stdin)) {
		if (strchr(line, '\n') == NULL && !feof(stdin)) {
			int c;
			while ((c = getchar()) != EOF && c != '\n') {}
			puts("error request line too long");
		} else {
			serve(line);
		}
		fflush(stdout);
	}
	return 0;
}
