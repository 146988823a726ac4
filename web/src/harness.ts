// The measurement harness of the browser engines, run inside a worker: the same method as
// the server's (package measure): warm-up, N timed runs with a monotonic clock around the
// call only, the value checked against the catalogue's, min / median / max; plus the very
// first call timed apart, before V8 has tiered the code up.

import type { WorkerMessage, WorkerRequest } from "./protocol";
import type { BrowserEnvironment, CellResult, Setup } from "./types";

/** A loaded engine: its one-off setup cost and the call to time. */
export interface Loaded {
  setup: Setup;
  call: () => number | bigint;
  note?: string;
}

/** The smallest step of performance.now() seen, in ns (5 µs when cross-origin isolated). */
export function timerResolutionNs(): number {
  let best = Infinity;
  for (let i = 0; i < 20 && best > 0; i++) {
    const t0 = performance.now();
    let t1 = performance.now();
    for (let spins = 0; t1 === t0 && spins < 1_000_000; spins++) t1 = performance.now();
    if (t1 > t0) best = Math.min(best, t1 - t0);
  }
  return Number.isFinite(best) ? Math.round(best * 1e6) : 0;
}

export function browserEnvironment(): BrowserEnvironment {
  return {
    user_agent: navigator.userAgent,
    cores: navigator.hardwareConcurrency ?? 0,
    cross_origin_isolated: (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true,
    timer_resolution_ns: timerResolutionNs(),
  };
}

/** median of sorted values: the middle one, or the mean of the middle two. */
export function median(sorted: number[]): number {
  const n = sorted.length;
  if (n === 0) return 0;
  const mid = n >> 1;
  return n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const ns = (ms: number): number => Math.round(ms * 1e6);

/** failureOf names what went wrong in a call, as the server's cells do. */
export function failureOf(err: unknown): string {
  if (err instanceof RangeError && /call stack/i.test(err.message)) return "stack overflow";
  if (err instanceof Error) {
    if (/stack (overflow|exceeds)/i.test(err.message)) return "stack overflow";
    if (/out of memory|memory access out of bounds|Cannot allocate/i.test(err.message)) return `out of memory: ${err.message}`;
    return `crashed: ${err.message}`;
  }
  return `crashed: ${String(err)}`;
}

/** measure loads the engine, then times the first call, the warm-ups and the runs. */
export async function measure(
  engine: string,
  req: WorkerRequest,
  load: () => Promise<Loaded>,
  post: (m: WorkerMessage) => void,
): Promise<CellResult> {
  const result: CellResult = {
    kernel: req.kernel,
    args: req.args,
    engine,
    where: "browser",
    runs: req.runs,
    warmup: req.warmup,
    value: "",
    expected: req.expected,
    samples_ns: [],
    min_ns: 0,
    median_ns: 0,
    max_ns: 0,
    setup: { compile_ns: 0, instantiate_ns: 0 },
    browser: browserEnvironment(),
  };
  let phase = "load";
  try {
    post({ type: "progress", phase: "load", done: 0, total: 1 });
    const loaded = await load();
    result.setup = loaded.setup;
    if (loaded.note) result.note = loaded.note;

    phase = "first call";
    post({ type: "progress", phase: "first call", done: 0, total: 1 });
    let t0 = performance.now();
    const first = loaded.call();
    result.first_ns = ns(performance.now() - t0);
    result.value = String(first);
    if (result.value !== req.expected) {
      result.failure = `wrong result: got ${result.value}, want ${req.expected}`;
      return result;
    }

    phase = "warmup";
    for (let i = 0; i < req.warmup; i++) {
      post({ type: "progress", phase: "warmup", done: i, total: req.warmup });
      loaded.call();
    }
    phase = "run";
    for (let i = 0; i < req.runs; i++) {
      post({ type: "progress", phase: "run", done: i, total: req.runs });
      t0 = performance.now();
      const v = loaded.call();
      const t = performance.now() - t0;
      result.samples_ns.push(ns(t));
      if (String(v) !== req.expected) {
        result.failure = `wrong result in run ${i + 1}: got ${String(v)}, want ${req.expected}`;
        return result;
      }
    }
    post({ type: "progress", phase: "run", done: req.runs, total: req.runs });
    const sorted = [...result.samples_ns].sort((a, b) => a - b);
    result.min_ns = sorted[0] ?? 0;
    result.max_ns = sorted[sorted.length - 1] ?? 0;
    result.median_ns = median(sorted);
  } catch (err) {
    result.failure = failureOf(err);
    if (phase === "load") result.failure = `failed to load: ${err instanceof Error ? err.message : String(err)}`;
  }
  return result;
}
