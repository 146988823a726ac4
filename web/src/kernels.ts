// The kernels ported to TypeScript for the browser-js engine: the same loops as
// kernels/recursion.go and kernels/loops.go, one function per kernel.
//
// JavaScript numbers are doubles: integers are exact only up to 2^53. Every kernel's result
// stays below that over the catalogue's ranges except the Fibonacci numbers past fib(78);
// fib_it switches to BigInt (wrapping at 64 bits as Go's int64 does) for those, and fib_rec
// refuses them (at n > 78 it would run for days anyway).

/** A kernel's port: its result as a number (exact below 2^53) or a BigInt. */
export type PortedKernel = (args: number[]) => number | bigint;

/** The largest n whose Fibonacci number is exact in a JavaScript number. */
export const FIB_MAX_EXACT = 78;

function arg(args: number[], i: number): number {
  const v = args[i];
  if (v === undefined) throw new Error(`missing argument ${i + 1}`);
  return v;
}

export function fibIt(n: number): number {
  let a = 0;
  let b = 1;
  for (let i = 0; i < n; i++) {
    const sum = a + b;
    a = b;
    b = sum;
  }
  return a;
}

/** fib_it with 64-bit wrapping BigInt arithmetic, for n past FIB_MAX_EXACT. */
export function fibItBig(n: number): bigint {
  let a = 0n;
  let b = 1n;
  for (let i = 0; i < n; i++) {
    const sum = BigInt.asIntN(64, a + b);
    a = b;
    b = sum;
  }
  return a;
}

export function fibRec(n: number): number {
  if (n < 3) return 1;
  return fibRec(n - 1) + fibRec(n - 2);
}

export function ack(n: number, m: number): number {
  if (n === 0) return m + 1;
  else if (m === 0) return ack(n - 1, 1);
  return ack(n - 1, ack(n, m - 1));
}

export function ackWhile(n: number, m: number): number {
  while (n !== 0) {
    if (m === 0) m = 1;
    else m = ackWhile(n, m - 1);
    n--;
  }
  return m + 1;
}

const SMALL_ARRAY_START = 20000;

function bigArray(size: number): number[] {
  const a: number[] = [];
  for (let i = 0; i < size; i++) a.push(i * 2);
  return a;
}

function smallArray(size: number): number[] {
  const a: number[] = [];
  for (let i = 0; i < size; i++) a.push((SMALL_ARRAY_START + i) * 2);
  return a;
}

/** test1: foreach big (foreach small) with loose ==, as the article's PHP. */
export function test1(big: number, small: number): number {
  const array = bigArray(big);
  const array2 = smallArray(small);
  let sum = 0;
  for (const val of array) {
    for (const val2 of array2) {
      // biome-ignore lint: the loose comparison is the point of test1
      if (val == val2) sum += val;
    }
  }
  return sum;
}

/** test1b: foreach big (foreach small) with strict ===. */
export function test1b(big: number, small: number): number {
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

/** test2: foreach small (foreach big). */
export function test2(big: number, small: number): number {
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

/** test3: foreach big (foreach small) with key lookup: iterate the keys, read by index. */
export function test3(big: number, small: number): number {
  const array = bigArray(big);
  const array2 = smallArray(small);
  let sum = 0;
  for (const key of array.keys()) {
    for (const key2 of array2.keys()) {
      if (array[key] === array2[key2]) sum += array[key]!;
    }
  }
  return sum;
}

/** test4: foreach small (foreach big) with key lookup. */
export function test4(big: number, small: number): number {
  const array = bigArray(big);
  const array2 = smallArray(small);
  let sum = 0;
  for (const key2 of array2.keys()) {
    for (const key of array.keys()) {
      if (array[key] === array2[key2]) sum += array[key]!;
    }
  }
  return sum;
}

/** test5: for big (for small), lengths read once. */
export function test5(big: number, small: number): number {
  const array = bigArray(big);
  const array2 = smallArray(small);
  let sum = 0;
  const count = array.length;
  const count2 = array2.length;
  for (let key = 0; key < count; key++) {
    for (let key2 = 0; key2 < count2; key2++) {
      if (array[key] === array2[key2]) sum += array[key]!;
    }
  }
  return sum;
}

/** test6: for small (for big), lengths read once. */
export function test6(big: number, small: number): number {
  const array = bigArray(big);
  const array2 = smallArray(small);
  let sum = 0;
  const count = array.length;
  const count2 = array2.length;
  for (let key2 = 0; key2 < count2; key2++) {
    for (let key = 0; key < count; key++) {
      if (array[key] === array2[key2]) sum += array[key]!;
    }
  }
  return sum;
}

function checksum(a: number[]): number {
  let sum = 0;
  for (const v of a) sum += v;
  return sum;
}

/** count is PHP's count(): a call per use (V8 may inline it, as PHP cannot). */
function count(a: number[]): number {
  return a.length;
}

/** test7: foreach large "by reference": JavaScript has no references, so each element is
 * written back through its key as the loop visits it. */
export function test7(large: number): number {
  const array = bigArray(large);
  array.forEach((val, key, arr) => {
    arr[key] = val + 1;
  });
  return checksum(array);
}

/** test8: for large with count() in the loop condition. */
export function test8(large: number): number {
  const array = bigArray(large);
  for (let key = 0; key < count(array); key++) array[key]!++;
  return checksum(array);
}

/** test8b: for large with count() outside the loop. */
export function test8b(large: number): number {
  const array = bigArray(large);
  const n = count(array);
  for (let key = 0; key < n; key++) array[key]!++;
  return checksum(array);
}

/** The ports by kernel name. */
export const PORTS: Record<string, PortedKernel> = {
  fib_it: (a) => {
    const n = arg(a, 0);
    return n > FIB_MAX_EXACT ? fibItBig(n) : fibIt(n);
  },
  fib_rec: (a) => fibRec(arg(a, 0)),
  ack_while: (a) => ackWhile(arg(a, 0), arg(a, 1)),
  ack: (a) => ack(arg(a, 0), arg(a, 1)),
  test1: (a) => test1(arg(a, 0), arg(a, 1)),
  test1b: (a) => test1b(arg(a, 0), arg(a, 1)),
  test2: (a) => test2(arg(a, 0), arg(a, 1)),
  test3: (a) => test3(arg(a, 0), arg(a, 1)),
  test4: (a) => test4(arg(a, 0), arg(a, 1)),
  test5: (a) => test5(arg(a, 0), arg(a, 1)),
  test6: (a) => test6(arg(a, 0), arg(a, 1)),
  test7: (a) => test7(arg(a, 0)),
  test8: (a) => test8(arg(a, 0)),
  test8b: (a) => test8b(arg(a, 0)),
};

/** Why the port cannot run these arguments exactly, or undefined when it can. */
export function refusal(kernel: string, args: number[]): string | undefined {
  if (kernel === "fib_rec" && (args[0] ?? 0) > FIB_MAX_EXACT) {
    return `refused: fib_rec(${args[0]}) exceeds 2^53, past a JavaScript number's exact integers (n ≤ ${FIB_MAX_EXACT})`;
  }
  return undefined;
}

/** A note on how the port computes these arguments, if anything differs from the rest. */
export function portNote(kernel: string, args: number[]): string | undefined {
  if (kernel === "fib_it" && (args[0] ?? 0) > FIB_MAX_EXACT) {
    return "BigInt arithmetic (fib(n) > 2^53 for n > 78), wrapped at 64 bits like Go's int64";
  }
  return undefined;
}
