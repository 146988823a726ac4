<?php
// The articles' kernels in PHP, and the peer driver that serves them over the line protocol
// of package peers (see ../peers.go): one request a line on stdin, one answer a line on
// stdout. The kernels follow kernels/recursion.go and kernels/loops.go; PHP's int is 64-bit,
// as Go's int64. The "php" peer runs this file as it is, "php-jit" with opcache's tracing JIT.
//
// PHP's VM keeps userland call frames on the heap, not on the C stack: a recursion too deep
// ends at memory_limit (set to 2G below: Go's goroutine stacks stop at 1 GB), with a fatal
// error that the shutdown function answers before the process exits.

declare(strict_types=1);

// ---- the recursion kernels (kernels/recursion.go) ----

// fib_it: past n = 92 PHP would turn the sum into a float where Go wraps; the catalogue
// stops at 92.
function fib_it(int $n): int {
    $a = 0;
    $b = 1;
    for ($i = 0; $i < $n; $i++) {
        $sum = $a + $b;
        $a = $b;
        $b = $sum;
    }
    return $a;
}

function fib_rec(int $n): int {
    if ($n < 3) return 1;
    return fib_rec($n - 1) + fib_rec($n - 2);
}

function ack(int $n, int $m): int {
    if ($n == 0) return $m + 1;
    else if ($m == 0) return ack($n - 1, 1);
    return ack($n - 1, ack($n, $m - 1));
}

function ack_while(int $n, int $m): int {
    while ($n != 0) {
        if ($m == 0) $m = 1;
        else $m = ack_while($n, $m - 1);
        $n--;
    }
    return $m + 1;
}

// ---- the loop kernels (kernels/loops.go) ----

const SMALL_ARRAY_START = 20000;

function big_array(int $size): array {
    $a = [];
    for ($i = 0; $i < $size; $i++) $a[] = $i * 2;
    return $a;
}

function small_array(int $size): array {
    $a = [];
    for ($i = 0; $i < $size; $i++) $a[] = (SMALL_ARRAY_START + $i) * 2;
    return $a;
}

// test1 is the article's loop with PHP's own loose ==. Go's tests 2 to 6 compare typed
// values (Go's Test2 is "Test1b with the loops swapped"), so they use ===, where the article
// wrote ==; on two ints both give the same result.
function test1(int $big, int $small): int {
    $array = big_array($big);
    $array2 = small_array($small);
    $sum = 0;
    foreach ($array as $val) {
        foreach ($array2 as $val2) if ($val == $val2) $sum += $val;
    }
    return $sum;
}

function test1b(int $big, int $small): int {
    $array = big_array($big);
    $array2 = small_array($small);
    $sum = 0;
    foreach ($array as $val) {
        foreach ($array2 as $val2) if ($val === $val2) $sum += $val;
    }
    return $sum;
}

function test2(int $big, int $small): int {
    $array = big_array($big);
    $array2 = small_array($small);
    $sum = 0;
    foreach ($array2 as $val2) {
        foreach ($array as $val) if ($val === $val2) $sum += $val;
    }
    return $sum;
}

function test3(int $big, int $small): int {
    $array = big_array($big);
    $array2 = small_array($small);
    $sum = 0;
    foreach ($array as $key => $val) {
        foreach ($array2 as $key2 => $val2) if ($array[$key] === $array2[$key2]) $sum += $array[$key];
    }
    return $sum;
}

// test4 is the loop the article meant: its PHP read $array2[$key2] with $key2 undefined.
function test4(int $big, int $small): int {
    $array = big_array($big);
    $array2 = small_array($small);
    $sum = 0;
    foreach ($array2 as $key2 => $val2) {
        foreach ($array as $key => $val) if ($array[$key] === $array2[$key2]) $sum += $array[$key];
    }
    return $sum;
}

function test5(int $big, int $small): int {
    $array = big_array($big);
    $array2 = small_array($small);
    $sum = 0;
    $count = count($array);
    $count2 = count($array2);
    for ($key = 0; $key < $count; $key++) {
        for ($key2 = 0; $key2 < $count2; $key2++) if ($array[$key] === $array2[$key2]) $sum += $array[$key];
    }
    return $sum;
}

function test6(int $big, int $small): int {
    $array = big_array($big);
    $array2 = small_array($small);
    $sum = 0;
    $count = count($array);
    $count2 = count($array2);
    for ($key2 = 0; $key2 < $count2; $key2++) {
        for ($key = 0; $key < $count; $key++) if ($array[$key] === $array2[$key2]) $sum += $array[$key];
    }
    return $sum;
}

function checksum(array $a): int {
    $sum = 0;
    foreach ($a as $v) $sum += $v;
    return $sum;
}

function test7(int $large): int {
    $array = big_array($large);
    foreach ($array as &$val) $val++;
    unset($val);
    return checksum($array);
}

function test8(int $large): int {
    $array = big_array($large);
    for ($key = 0; $key < count($array); $key++) $array[$key]++;
    return checksum($array);
}

function test8b(int $large): int {
    $array = big_array($large);
    $count = count($array);
    for ($key = 0; $key < $count; $key++) $array[$key]++;
    return checksum($array);
}

// ---- the driver ----

// A parameter's allowed range: the catalogue's (kernels/catalogue.go).
const FIB_N = ['n', 0, 92];
const ACK_N = ['n', 0, 3];
const ACK_M = ['m', 0, 20];
const BIG = ['big', 1, 1000000];
const SMALL = ['small', 1, 100000];
const LARGE = ['large', 1, 10000000];

const KERNELS = [
    'fib_it' => [FIB_N], 'fib_rec' => [FIB_N],
    'ack_while' => [ACK_N, ACK_M], 'ack' => [ACK_N, ACK_M],
    'test1' => [BIG, SMALL], 'test1b' => [BIG, SMALL], 'test2' => [BIG, SMALL],
    'test3' => [BIG, SMALL], 'test4' => [BIG, SMALL], 'test5' => [BIG, SMALL],
    'test6' => [BIG, SMALL],
    'test7' => [LARGE], 'test8' => [LARGE], 'test8b' => [LARGE],
];

const MAX_REPS = 1000000000;
const USAGE = 'want <kernel> <reps> <arg1> [<arg2>]';

// wrap_add adds two ints wrapping at 64 bits, as Go's int64 does: PHP would turn an
// overflowing sum into a float.
function wrap_add(int $a, int $b): int {
    $s = $a + $b;
    if (is_int($s)) return $s;
    // Add the low 32 bits and the high halves apart, then recombine with wrapping.
    $lo = ($a & 0xFFFFFFFF) + ($b & 0xFFFFFFFF);
    $hi = (($a >> 32) + ($b >> 32) + ($lo >> 32)) & 0xFFFFFFFF;
    return ($hi << 32) | ($lo & 0xFFFFFFFF);
}

function parse_int(string $s): ?int {
    if (preg_match('/^[+-]?[0-9]+$/', $s) !== 1) return null;
    $v = filter_var($s, FILTER_VALIDATE_INT);
    return $v === false ? null : $v;
}

const MAX_SAMPLES = 1000;
const TIMES_USAGE = 'want times <kernel> <samples> <group> <arg1> [<arg2>]';

// parse checks a request's fields, <kernel> <reps> <args...>: [name, reps, args], or the
// error answer as a string.
function parse(array $f): array|string {
    if (count($f) === 1 && $f[0] === '') return 'error empty request: ' . USAGE;
    if (count($f) < 3) return 'error too few fields: ' . USAGE;
    if (count($f) > 4) return 'error too many fields: ' . USAGE;
    $name = $f[0];
    if (!array_key_exists($name, KERNELS)) return "error unknown kernel \"$name\"";
    $params = KERNELS[$name];
    $reps = parse_int($f[1]);
    if ($reps === null || $reps < 1 || $reps > MAX_REPS) {
        return "error reps \"{$f[1]}\" is not allowed: want an integer from 1 to " . MAX_REPS;
    }
    if (count($f) - 2 !== count($params)) {
        return "error $name takes " . count($params) . ' arguments, got ' . (count($f) - 2);
    }
    $args = [];
    foreach ($params as $i => [$pname, $min, $max]) {
        $s = $f[2 + $i];
        $v = parse_int($s);
        if ($v === null) return "error $name: $pname = \"$s\" is not an integer";
        if ($v < $min || $v > $max) return "error $name: $pname = \"$s\" is out of range: allowed $min to $max";
        $args[] = $v;
    }
    return [$name, $reps, $args];
}

// serve_times answers "times <kernel> <samples> <group> <args...>" ($f without "times"):
// samples × group calls, the clock read between every group.
function serve_times(array $f): string {
    if (count($f) < 4) return 'error too few fields: ' . TIMES_USAGE;
    $samples = parse_int($f[1]);
    if ($samples === null || $samples < 1 || $samples > MAX_SAMPLES) {
        return "error samples \"{$f[1]}\" is not allowed: want an integer from 1 to " . MAX_SAMPLES;
    }
    $p = parse(array_merge([$f[0]], array_slice($f, 2)));
    if (is_string($p)) return $p;
    [$name, $group, $args] = $p;
    $times = [];
    $first = 0;
    $sum = 0;
    try {
        for ($i = 0; $i < $samples; $i++) {
            $start = hrtime(true);
            for ($r = 0; $r < $group; $r++) {
                $v = $name(...$args);
                if ($i === 0 && $r === 0) $first = $v;
                $sum = wrap_add($sum, $v);
            }
            $times[] = hrtime(true) - $start;
        }
    } catch (Throwable $e) {
        return "error $name: " . get_class($e) . ': ' . str_replace("\n", ' ', $e->getMessage());
    }
    return "times $first $sum " . implode(' ', $times);
}

function serve(string $line): string {
    $f = preg_split('/[ \t]+/', trim($line));
    if ($f[0] === 'times') return serve_times(array_slice($f, 1));
    $p = parse($f);
    if (is_string($p)) return $p;
    [$name, $reps, $args] = $p;
    $first = 0;
    $sum = 0;
    $start = hrtime(true);
    try {
        for ($r = 0; $r < $reps; $r++) {
            $v = $name(...$args);
            if ($r === 0) $first = $v;
            $sum = wrap_add($sum, $v);
        }
    } catch (Throwable $e) {
        return "error $name: " . get_class($e) . ': ' . str_replace("\n", ' ', $e->getMessage());
    }
    $elapsed = hrtime(true) - $start;
    return "ok $first $sum $elapsed";
}

function main(): void {
    $status = function_exists('opcache_get_status') ? opcache_get_status(false) : false;
    $opcache = is_array($status) && ($status['opcache_enabled'] ?? false);
    $jit = is_array($status) && ($status['jit']['on'] ?? false);
    echo 'ready php PHP ' . PHP_VERSION . ' (opcache ' . ($opcache ? 'on' : 'off') . ', '
        . ($jit ? 'JIT ' . ini_get('opcache.jit') : 'no JIT') . ")\n";
    while (($line = fgets(STDIN)) !== false) {
        echo serve($line), "\n";
    }
}

// A fatal error (out of memory, most likely: the VM's call frames live on the heap, so a
// deep recursion ends here rather than on the C stack) cannot be caught: answer it from the
// shutdown function, so the request still gets its one line.
function on_shutdown(): void {
    $e = error_get_last();
    if ($e !== null && ($e['type'] & (E_ERROR | E_CORE_ERROR | E_COMPILE_ERROR)) !== 0) {
        echo 'error fatal: ', str_replace("\n", ' ', $e['message']), "\n";
    }
}

ini_set('display_errors', 'stderr');
ini_set('memory_limit', '2G');
register_shutdown_function('on_shutdown');
main();
