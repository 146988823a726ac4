// The articles' kernels in JavaScript, and the peer driver that serves them on Node over the
// line protocol of package peers (see ../peers.go): one request a line on stdin, one answer
// a line on stdout. The kernels follow kernels/recursion.go and kernels/loops.go, as the
// browser's port (web/src/kernels.ts) does.
//
// JavaScript numbers are doubles, exact for integers up to 2^53. Every kernel's value stays
// below that over the catalogue's ranges except the Fibonacci numbers past fib(78): fib_it
// switches to BigInt (wrapping at 64 bits as Go's int64 does) for those, and fib_rec refuses
// them (at n > 78 it would run for days anyway). The sum over repetitions can pass 2^53, so
// it is carried in a BigInt, flushed from a number accumulator before the number could
// become inexact.
"use strict";

const readline = require("node:readline");

// ---- the recursion kernels (kernels/recursion.go) ----

const FIB_MAX_EXACT = 78;

function fibIt(n) {
  let a = 0;
  let b = 1;
  for (let i = 0; i < n; i++) {
    const sum = a + b;
    a = b;
    b = sum;
  }
  return a;
}

// fibItBig is fib_it with 64-bit wrapping BigInt arithmetic, for n past FIB_MAX_EXACT.
function fibItBig(n) {
  let a = 0n;
  let b = 1n;
  for (let i = 0; i < n; i++) {
    const sum = BigInt.asIntN(64, a + b);
    a = b;
    b = sum;
  }
  return a;
}

function fibRec(n) {
  if (n < 3) return 1;
  return fibRec(n - 1) + fibRec(n - 2);
}

function ack(n, m) {
  if (n === 0) return m + 1;
  else if (m === 0) return ack(n - 1, 1);
  return ack(n - 1, ack(n, m - 1));
}

function ackWhile(n, m) {
  while (n !== 0) {
    if (m === 0) m = 1;
    else m = ackWhile(n, m - 1);
    n--;
  }
  return m + 1;
}

// ---- the loop kernels (kernels/loops.go) ----

const SMALL_ARRAY_START = 20000;

function bigArray(size) {
  const a = [];
  for (let i = 0; i < size; i++) a.push(i * 2);
  return a;
}

function smallArray(size) {
  const a = [];
  for (let i = 0; i < size; i++) a.push((SMALL_ARRAY_START + i) * 2);
  return a;
}

// test1: loose == on plain arrays, the closest JavaScript has to PHP's loose comparison.
function test1(big, small) {
  const array = bigArray(big);
  const array2 = smallArray(small);
  let sum = 0;
  for (const val of array) {
    for (const val2 of array2) {
      if (val == val2) sum += val;
    }
  }
  return sum;
}

function test1b(big, small) {
  const array = bigArray(big);
  const array2 = smallArray(small);
  let sum = 0;
  for (const val of array) {
    for (const val2 of array2) {
      if (val === val2) sum += val;
    }
  }
  return sum;
}

function test2(big, small) {
  const array = bigArray(big);
  const array2 = smallArray(small);
  let sum = 0;
  for (const val2 of array2) {
    for (const val of array) {
      if (val === val2) sum += val;
    }
  }
  return sum;
}

// test3 and test4: iterate the keys, read both values by index.
function test3(big, small) {
  const array = bigArray(big);
  const array2 = smallArray(small);
  let sum = 0;
  for (const key of array.keys()) {
    for (const key2 of array2.keys()) {
      if (array[key] === array2[key2]) sum += array[key];
    }
  }
  return sum;
}

function test4(big, small) {
  const array = bigArray(big);
  const array2 = smallArray(small);
  let sum = 0;
  for (const key2 of array2.keys()) {
    for (const key of array.keys()) {
      if (array[key] === array2[key2]) sum += array[key];
    }
  }
  return sum;
}

function test5(big, small) {
  const array = bigArray(big);
  const array2 = smallArray(small);
  let sum = 0;
  const count = array.length;
  const count2 = array2.length;
  for (let key = 0; key < count; key++) {
    for (let key2 = 0; key2 < count2; key2++) {
      if (array[key] === array2[key2]) sum += array[key];
    }
  }
  return sum;
}

function test6(big, small) {
  const array = bigArray(big);
  const array2 = smallArray(small);
  let sum = 0;
  const count = array.length;
  const count2 = array2.length;
  for (let key2 = 0; key2 < count2; key2++) {
    for (let key = 0; key < count; key++) {
      if (array[key] === array2[key2]) sum += array[key];
    }
  }
  return sum;
}

function checksum(a) {
  let sum = 0;
  for (const v of a) sum += v;
  return sum;
}

// count is PHP's count(): a call per use (V8 may inline it, as PHP cannot).
function count(a) {
  return a.length;
}

// test7: JavaScript has no references, so each element is written back through its key as
// the loop visits it.
function test7(large) {
  const array = bigArray(large);
  array.forEach((val, key, arr) => {
    arr[key] = val + 1;
  });
  return checksum(array);
}

function test8(large) {
  const array = bigArray(large);
  for (let key = 0; key < count(array); key++) array[key]++;
  return checksum(array);
}

function test8b(large) {
  const array = bigArray(large);
  const n = count(array);
  for (let key = 0; key < n; key++) array[key]++;
  return checksum(array);
}

// ---- the driver ----

// A parameter's allowed range: the catalogue's (kernels/catalogue.go).
const FIB_N = { name: "n", min: 0, max: 92 };
const ACK_N = { name: "n", min: 0, max: 3 };
const ACK_M = { name: "m", min: 0, max: 20 };
const BIG = { name: "big", min: 1, max: 1000000 };
const SMALL = { name: "small", min: 1, max: 100000 };
const LARGE = { name: "large", min: 1, max: 10000000 };

const KERNELS = {
  fib_it: { params: [FIB_N], call: (a) => (a[0] > FIB_MAX_EXACT ? fibItBig(a[0]) : fibIt(a[0])) },
  fib_rec: { params: [FIB_N], call: (a) => fibRec(a[0]) },
  ack_while: { params: [ACK_N, ACK_M], call: (a) => ackWhile(a[0], a[1]) },
  ack: { params: [ACK_N, ACK_M], call: (a) => ack(a[0], a[1]) },
  test1: { params: [BIG, SMALL], call: (a) => test1(a[0], a[1]) },
  test1b: { params: [BIG, SMALL], call: (a) => test1b(a[0], a[1]) },
  test2: { params: [BIG, SMALL], call: (a) => test2(a[0], a[1]) },
  test3: { params: [BIG, SMALL], call: (a) => test3(a[0], a[1]) },
  test4: { params: [BIG, SMALL], call: (a) => test4(a[0], a[1]) },
  test5: { params: [BIG, SMALL], call: (a) => test5(a[0], a[1]) },
  test6: { params: [BIG, SMALL], call: (a) => test6(a[0], a[1]) },
  test7: { params: [LARGE], call: (a) => test7(a[0]) },
  test8: { params: [LARGE], call: (a) => test8(a[0]) },
  test8b: { params: [LARGE], call: (a) => test8b(a[0]) },
};

const MAX_REPS = 1000000000;
const USAGE = "want <kernel> <reps> <arg1> [<arg2>]";
const INT = /^[+-]?[0-9]+$/;
// Below 2^52 a number accumulator plus a value below 2^52 stays exact.
const FLUSH = 2 ** 52;

// calls makes reps calls and returns the first value and the sum wrapped to int64.
function calls(call, args, reps) {
  let first = call(args);
  if (typeof first === "bigint" || Math.abs(first) >= FLUSH) {
    let sum = BigInt(first);
    for (let r = 1; r < reps; r++) sum = BigInt.asIntN(64, sum + BigInt(call(args)));
    return [BigInt(first), sum];
  }
  let big = 0n;
  let acc = first;
  for (let r = 1; r < reps; r++) {
    acc += call(args);
    if (acc >= FLUSH || acc <= -FLUSH) {
      big += BigInt(acc);
      acc = 0;
    }
  }
  return [BigInt(first), BigInt.asIntN(64, big + BigInt(acc))];
}

const MAX_SAMPLES = 1000;
const TIMES_USAGE = "want times <kernel> <samples> <group> <arg1> [<arg2>]";

// parse checks a request's fields, <kernel> <reps> <args...>, and returns the kernel, its
// name, reps and arguments, or the error answer as a string.
function parse(f) {
  if (f.length === 1 && f[0] === "") return `error empty request: ${USAGE}`;
  if (f.length < 3) return `error too few fields: ${USAGE}`;
  if (f.length > 4) return `error too many fields: ${USAGE}`;
  const name = f[0];
  const k = Object.hasOwn(KERNELS, name) ? KERNELS[name] : undefined;
  if (k === undefined) return `error unknown kernel "${name}"`;
  const reps = INT.test(f[1]) ? Number(f[1]) : 0;
  if (reps < 1 || reps > MAX_REPS) {
    return `error reps "${f[1]}" is not allowed: want an integer from 1 to ${MAX_REPS}`;
  }
  if (f.length - 2 !== k.params.length) {
    return `error ${name} takes ${k.params.length} arguments, got ${f.length - 2}`;
  }
  const args = [];
  for (let i = 0; i < k.params.length; i++) {
    const p = k.params[i];
    const s = f[2 + i];
    if (!INT.test(s)) return `error ${name}: ${p.name} = "${s}" is not an integer`;
    const v = Number(s);
    if (v < p.min || v > p.max) {
      return `error ${name}: ${p.name} = "${s}" is out of range: allowed ${p.min} to ${p.max}`;
    }
    args.push(v);
  }
  if (name === "fib_rec" && args[0] > FIB_MAX_EXACT) {
    return `error fib_rec(${args[0]}) exceeds 2^53, past a JavaScript number's exact integers: allowed n up to ${FIB_MAX_EXACT}`;
  }
  return { name, k, reps, args };
}

// failure is the answer to an exception a kernel threw.
function failure(name, e) {
  if (e instanceof RangeError && /call stack/i.test(e.message)) {
    return `error stack overflow: ${name} exhausted V8's stack (RangeError: ${e.message})`;
  }
  return `error ${name}: ${e}`.replace(/\n/g, " ");
}

// serveTimes answers "times <kernel> <samples> <group> <args...>" (f without "times"):
// samples × group calls, the clock read between every group.
function serveTimes(f) {
  if (f.length < 4) return `error too few fields: ${TIMES_USAGE}`;
  const samples = INT.test(f[1]) ? Number(f[1]) : 0;
  if (samples < 1 || samples > MAX_SAMPLES) {
    return `error samples "${f[1]}" is not allowed: want an integer from 1 to ${MAX_SAMPLES}`;
  }
  const p = parse([f[0], ...f.slice(2)]);
  if (typeof p === "string") return p;
  const times = new Array(samples);
  let first;
  let sum = 0n;
  try {
    for (let i = 0; i < samples; i++) {
      const start = process.hrtime.bigint();
      const [v, part] = calls(p.k.call, p.args, p.reps);
      times[i] = process.hrtime.bigint() - start;
      if (i === 0) first = v;
      sum = BigInt.asIntN(64, sum + part);
    }
  } catch (e) {
    return failure(p.name, e);
  }
  return `times ${first} ${sum} ${times.join(" ")}`;
}

function serve(line) {
  const f = line.trim().split(/[ \t]+/);
  if (f[0] === "times") return serveTimes(f.slice(1));
  const p = parse(f);
  if (typeof p === "string") return p;
  const start = process.hrtime.bigint();
  let first;
  let sum;
  try {
    [first, sum] = calls(p.k.call, p.args, p.reps);
  } catch (e) {
    return failure(p.name, e);
  }
  const elapsed = process.hrtime.bigint() - start;
  return `ok ${first} ${sum} ${elapsed}`;
}

function main() {
  process.stdout.write(`ready javascript node ${process.version} (V8 ${process.versions.v8})\n`);
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  rl.on("line", (line) => {
    process.stdout.write(`${serve(line)}\n`);
  });
}

main();
