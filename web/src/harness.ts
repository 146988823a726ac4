// The measurement harness of the browser engines, run inside a worker: the same method as
// the server's (package measure): warm-up, calibrated samples of k calls timed together
// with a monotonic clock (performance.now() steps by 5 µs: a sample must last milliseconds
// to time a call of nanoseconds), every value checked against the catalogue's, min /
// median / max and the median's 95% interval; plus the very first call timed apart,
// before V8 has tiered the code up.

import { DEFAULT_MIN_SAMPLE_MS, DEFAULT_WARMUP_MS, GROW_MARGIN, MAX_CALLS, MAX_GROWTH, MAX_RESTARTS } from "./calibration";
import type { TimedCalls, WorkerMessage, WorkerRequest, WorkerScope } from "./protocol";
import { median, medianCI } from "./stats";
import type { BrowserEnvironment, CellResult, Setup } from "./types";

/** A loaded engine: its one-off setup cost and the call to time. */
export interface Loaded {
  setup: Setup;
  call: () => number | bigint;
  note?: string;
  /** explain, if set, turns what a call threw into the error that names it. */
  explain?: (err: unknown) => Error;
  /** expectFirst makes the first call's value the expected one, for a kernel without a
   * catalogue value (a user's): every later call must repeat it. */
  expectFirst?: boolean;
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

export { median } from "./stats";

const ns = (ms: number): number => Math.round(ms * 1e6);

/** failureOf names what went wrong in a call, as the server's cells do. */
export function failureOf(err: unknown): string {
  if (err instanceof RangeError && /call stack/i.test(err.message)) return "stack overflow";
  if (err instanceof Error) {
    // V8: "Maximum call stack size exceeded"; SpiderMonkey: "too much recursion".
    if (/stack (overflow|exceeds)|too much recursion/i.test(err.message)) return "stack overflow";
    if (/out of memory|memory access out of bounds|Cannot allocate/i.test(err.message)) return `out of memory: ${err.message}`;
    return `crashed: ${err.message}`;
  }
  return `crashed: ${String(err)}`;
}

// The calibration rules are the server's (package measure), generated into calibration.ts.
export { DEFAULT_MIN_SAMPLE_MS, DEFAULT_WARMUP_MS } from "./calibration";

/** grow returns the calls of the next calibration batch after reps calls took ms: reps
 * itself when the batch reached the target, else a prediction GROW_MARGIN past it, at most
 * MAX_GROWTH times reps (as testing.B predicts b.N, and the server's harness). */
export function grow(reps: number, ms: number, targetMs: number): number {
  if (ms >= targetMs || reps >= MAX_CALLS) return reps;
  const per = Math.max(ms / reps, 1e-6);
  const next = Math.floor(Math.min((GROW_MARGIN * targetMs) / per, MAX_GROWTH * reps, MAX_CALLS));
  return Math.max(next, reps + 1);
}

/** serveMeasurements makes this Web Worker one browser engine: each request is measured
 * with what load gives for it, its progress posted as it goes, then its result, which
 * finish may amend first. */
export function serveMeasurements(
  engine: string,
  load: (req: WorkerRequest) => Promise<Loaded>,
  finish?: (result: CellResult) => void,
): void {
  const scope = self as unknown as WorkerScope;
  let kept: { key: string; loaded: Loaded } | undefined;
  scope.onmessage = async (ev: MessageEvent<WorkerRequest>) => {
    const req = ev.data;
    if (req.times) {
      const key = JSON.stringify([req.kernel, req.export, req.args]);
      let times: TimedCalls;
      try {
        const first = kept?.key !== key;
        if (first) kept = { key, loaded: await load(req) };
        times = timeCalls(kept!.loaded, req.times.samples, req.times.group);
        if (first) times.setup = kept!.loaded.setup;
      } catch (thrown) {
        const explain = kept?.key === key ? kept.loaded.explain : undefined;
        times = { times_ns: [], value: "", wrong: 0, failure: failureOf(explain ? explain(thrown) : thrown) };
      }
      scope.postMessage({ type: "times", times });
      return;
    }
    const result = await measure(engine, req, () => load(req), (m) => scope.postMessage(m));
    finish?.(result);
    scope.postMessage({ type: "result", result });
  };
}

/** timeCalls makes samples × group calls back to back, each group timed with
 * performance.now(): a warm-up series from wherever the calls are (the first request's
 * first call is the engine's first). Each value is compared with the first one; the
 * caller checks that one against the catalogue's. */
export function timeCalls(loaded: Loaded, samples: number, group: number): TimedCalls {
  const call = loaded.call;
  const out: TimedCalls = { times_ns: new Array<number>(samples), value: "", wrong: 0 };
  let first: number | bigint | undefined;
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    const v = call();
    for (let j = 1; j < group; j++) if (call() !== v) out.wrong++;
    out.times_ns[i] = ns(performance.now() - t0);
    if (first === undefined) first = v;
    else if (v !== first) out.wrong++;
  }
  out.value = String(first);
  return out;
}

/** measure loads the engine, times the first call alone, runs the warm-ups (and on until
 * the warm-up has lasted DEFAULT_WARMUP_MS), finds the calls per sample k (a sample lasts
 * at least min_sample_ms, as the server's), then takes the samples, each timed as a whole
 * with performance.now() and divided by k. Every call's value is compared with the
 * catalogue's. */
export async function measure(
  engine: string,
  req: WorkerRequest,
  load: () => Promise<Loaded>,
  post: (m: WorkerMessage) => void,
): Promise<CellResult> {
  const begin = performance.now();
  const result: CellResult = {
    kernel: req.kernel,
    args: req.args,
    engine,
    where: "browser",
    runs: req.runs,
    warmup: req.warmup,
    calls: 1,
    value: "",
    expected: req.expected,
    samples_ns: [],
    min_ns: 0,
    median_ns: 0,
    max_ns: 0,
    setup: { compile_ns: 0, instantiate_ns: 0 },
    browser: browserEnvironment(),
  };
  const target = req.min_sample_ms ?? DEFAULT_MIN_SAMPLE_MS;
  result.min_sample_ns = ns(target);
  const budget = req.budget_ms ?? 0;
  let longest = 0;
  const fits = (): boolean => budget <= 0 || performance.now() - begin + longest <= budget;
  let phase = "load";
  let explain: ((err: unknown) => Error) | undefined;
  try {
    post({ type: "progress", phase: "load", done: 0, total: 1 });
    const loaded = await load();
    result.setup = loaded.setup;
    if (loaded.note) result.note = loaded.note;
    explain = loaded.explain;
    const call = loaded.call;

    phase = "first call";
    post({ type: "progress", phase: "first call", done: 0, total: 1 });
    let t0 = performance.now();
    const first = call();
    result.first_ns = ns(performance.now() - t0);
    result.value = String(first);
    if (loaded.expectFirst) result.expected = req.expected = result.value;
    if (result.value !== req.expected) {
      result.failure = `wrong result: got ${result.value}, want ${req.expected}`;
      return result;
    }
    // Every call is compared with the expected value in the type the engine returns it
    // (a BigInt from wasm's i64, a number from the JavaScript port): no conversion per call.
    const want: number | bigint = typeof first === "bigint" ? BigInt(req.expected) : Number(req.expected);

    /** batch times reps calls together; wrong counts the calls whose value differed. */
    const batch = (reps: number): { ms: number; wrong: number; value: number | bigint } => {
      let wrong = 0;
      const start = performance.now();
      const v = call();
      if (v !== want) wrong++;
      for (let i = 1; i < reps; i++) if (call() !== want) wrong++;
      const ms = performance.now() - start;
      longest = Math.max(longest, ms);
      return { ms, wrong, value: v };
    };
    const check = (b: { wrong: number; value: number | bigint }, reps: number, where: string): boolean => {
      if (b.wrong === 0) return true;
      result.failure = `wrong result ${where}: ${b.wrong} of ${reps} calls differ (the first gave ${String(b.value)}), want ${req.expected}`;
      return false;
    };

    phase = "warmup";
    const warmStart = performance.now();
    for (let i = 0; i < req.warmup; i++) {
      if (i > 0 && !fits()) break;
      post({ type: "progress", phase: "warmup", done: i, total: req.warmup });
      if (!check(batch(1), 1, `in warm-up ${i + 1}`)) return result;
    }
    if (req.warmup > 0) {
      // The warm-up goes on until it has lasted req.warmup_ms (DEFAULT_WARMUP_MS), in batches grown toward
      // the sample minimum, leaving the time the samples likely take (as the server's).
      const leavesRoom = (): boolean =>
        budget <= 0 || performance.now() - begin + longest + req.runs * Math.max(target, longest) <= budget;
      const warmFor = req.warmup_ms ?? DEFAULT_WARMUP_MS;
      for (let reps = 1; performance.now() - warmStart < warmFor && leavesRoom(); ) {
        const b = batch(reps);
        if (!check(b, reps, "in warm-up")) return result;
        if (target > 0) reps = grow(reps, b.ms, target);
      }
      result.warmed_up_ns = ns(performance.now() - warmStart);
    }

    phase = "calibrate";
    post({ type: "progress", phase: "calibrate", done: 0, total: 1 });
    let reps = 1;
    for (;;) {
      const b = batch(reps);
      if (!check(b, reps, "while calibrating")) return result;
      const next = target > 0 ? grow(reps, b.ms, target) : reps;
      const predicted = (b.ms / reps) * next;
      if (next === reps || (budget > 0 && performance.now() - begin + predicted > budget)) {
        result.samples_ns.push((b.ms * 1e6) / reps);
        break;
      }
      reps = next;
    }
    result.calls = reps;

    phase = "run";
    let restarts = 0;
    while (result.samples_ns.length < req.runs) {
      if (!fits()) break;
      const i = result.samples_ns.length;
      post({ type: "progress", phase: "run", done: i, total: req.runs });
      const b = batch(reps);
      if (!check(b, reps, `in sample ${i + 1}`)) return result;
      const next = grow(reps, b.ms, target);
      const predicted = (b.ms / reps) * next;
      if (b.ms < target / 2 && restarts < MAX_RESTARTS && next > reps && (budget <= 0 || performance.now() - begin + predicted <= budget)) {
        // The calls got faster than calibration saw them (a later JIT tier, warm memory):
        // k grows from this sample's pace and the samples start over, as the server's.
        reps = next;
        result.calls = reps;
        result.samples_ns = [];
        restarts++;
        continue;
      }
      result.samples_ns.push((b.ms * 1e6) / reps);
    }
    post({ type: "progress", phase: "run", done: req.runs, total: req.runs });
    result.runs = result.samples_ns.length;
    const sorted = [...result.samples_ns].sort((a, b) => a - b);
    result.min_ns = sorted[0] ?? 0;
    result.max_ns = sorted[sorted.length - 1] ?? 0;
    result.median_ns = median(sorted);
    const ci = medianCI(sorted);
    if (ci) result.ci = ci;
  } catch (thrown) {
    const err = explain && phase !== "load" ? explain(thrown) : thrown;
    result.failure = failureOf(err);
    if (phase === "load") result.failure = `failed to load: ${err instanceof Error ? err.message : String(err)}`;
    if (result.failure === "stack overflow") result.note = stackNote(thrown);
  }
  if (!result.note && result.browser && !result.browser.cross_origin_isolated) result.note = timerNote(result.browser.timer_resolution_ns);
  return result;
}

/** stackNote says why a call overflowed in a browser: the worker's stack, and what the
 * browser said (V8's RangeError, SpiderMonkey's InternalError "too much recursion"). */
export function stackNote(thrown: unknown): string {
  const said = thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
  return (
    `the Web Worker's stack ran out (${said}): a browser gives a worker a smaller stack than its main thread ` +
    "(Chromium about half; Firefox counts frames against its own limit), and ack(3, m) recurses about 2^(m+3) calls deep"
  );
}

/** timerNote says why times are coarse in a page that is not cross-origin isolated. */
export function timerNote(stepNs: number): string {
  const step = stepNs >= 1e6 ? `${stepNs / 1e6} ms` : `${Math.round(stepNs / 1e3)} µs`;
  return (
    `performance.now() steps ${step} here: the page is not cross-origin isolated (COOP + COEP), so the browser coarsens its clock ` +
    "(Firefox to 1 ms, Chromium to 100 µs); samples still last the minimum, k calls over many steps"
  );
}
