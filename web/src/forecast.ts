// What this browser's last runs say of a cell before it runs: a cell that failed at these
// arguments or smaller (a stack overflow, a time-out), or whose last median says its runs
// will not fit the time limit, is named before Run, with a size that ran here, when one did.
//
// The outcomes are kept in localStorage, per kernel and engine: the last failure and the
// last success, each with its arguments.

import type { RunRequest } from "./api";
import type { CellState } from "./cells";

const KEY = "wasmgap-outcomes";

interface Outcome {
  args: number[];
  /** How long the whole cell took, worker and warm-up included, in ms. */
  wallMs?: number;
  /** The median time per call, for a success. */
  ns?: number;
  /** What went wrong, for a failure ("stack overflow", "timed out after 30s"). */
  failure?: string;
}

interface Outcomes {
  ok?: Outcome;
  failed?: Outcome;
}

type Store = Record<string, Outcomes>;

function load(): Store {
  try {
    const v = JSON.parse(localStorage.getItem(KEY) ?? "{}") as unknown;
    return v && typeof v === "object" ? (v as Store) : {};
  } catch {
    return {};
  }
}

function save(s: Store): void {
  try {
    localStorage.setItem(KEY, JSON.stringify(s));
  } catch {
    // A full or forbidden storage only loses the forecast.
  }
}

const key = (kernel: string, engine: string) => `${kernel}|${engine}`;

/** atMost reports whether a is no larger than b in every argument (the same kernel's). */
const atMost = (a: number[], b: number[]) => a.length === b.length && a.every((v, i) => v <= b[i]!);

/**
 * record keeps a finished cell's outcome: a result's median, or a failure's words (a
 * failure the engine or the time limit gave, not a refusal of the request).
 */
export function record(kernel: string, engine: string, args: number[], state: CellState, wallMs?: number): void {
  const s = load();
  const o = (s[key(kernel, engine)] ??= {});
  if (state.kind === "done" && !state.result.failure && state.result.median_ns > 0) {
    o.ok = { args, ns: state.result.median_ns, wallMs };
    if (o.failed && atMost(o.failed.args, args)) delete o.failed; // it runs now
  } else if (state.kind === "done" && state.result.failure) {
    o.failed = { args, failure: state.result.failure, wallMs };
  } else return;
  save(s);
}

/** lastRun names the run a forecast comes from: this browser's for its own cells, the last
 * Run from this page for the server's. */
function lastRun(engine: string): string {
  return engine.startsWith("browser-") ? "this browser's last run" : "the last Run from this page";
}

/** A forecast of one cell: why it is expected to fail, and arguments that ran here. */
export interface Forecast {
  kernel: string;
  engine: string;
  why: string;
  fits?: number[];
}

/**
 * forecast says whether a cell is expected to fail or overrun: it failed in this browser at
 * these arguments or smaller, or its last median at these arguments times the calls a run
 * makes (the warm-up's and the timed samples', each at least minSampleMs) is past the time
 * limit. fits is the largest arguments that ran on this engine, when smaller.
 */
export function forecast(kernel: string, engine: string, args: number[], calls: { runs: number; warmup: number; minSampleMs: number; timeoutMs: number }): Forecast | undefined {
  const o = load()[key(kernel, engine)];
  if (!o) return undefined;
  const fits = o.ok && atMost(o.ok.args, args) && !atMost(args, o.ok.args) ? o.ok.args : undefined;
  if (o.failed && atMost(o.failed.args, args)) {
    const same = atMost(args, o.failed.args);
    return { kernel, engine, fits, why: `${o.failed.failure}${same ? "" : ` at (${o.failed.args.join(", ")})`} in ${lastRun(engine)}` };
  }
  if (o.ok && o.ok.ns && atMost(args, o.ok.args) && atMost(o.ok.args, args)) {
    const sampleMs = Math.max(o.ok.ns / 1e6, calls.minSampleMs);
    const ms = (calls.runs + calls.warmup) * sampleMs;
    if (ms > calls.timeoutMs) {
      return { kernel, engine, why: `its ${calls.runs + calls.warmup} runs take about ${Math.round(ms / 1000)} s, past the ${Math.round(calls.timeoutMs / 1000)} s limit (${lastRun(engine)})` };
    }
  }
  return undefined;
}

/**
 * cellTime is how long a cell is expected to take, in ms, from this browser's last run of
 * it: its wall time at these arguments, or at smaller ones scaled by how its median grew
 * (a kernel's growth from the arguments that ran); a failure at these arguments or
 * smaller lasts as long as it did, a time-out the limit. Undefined when nothing is known.
 */
export function cellTime(kernel: string, engine: string, args: number[], limitMs: number): number | undefined {
  const o = load()[key(kernel, engine)];
  if (!o) return undefined;
  if (o.failed && atMost(o.failed.args, args)) return /timed out/.test(o.failed.failure ?? "") ? limitMs : o.failed.wallMs;
  if (!o.ok?.wallMs) return undefined;
  if (atMost(args, o.ok.args) && atMost(o.ok.args, args)) return o.ok.wallMs;
  if (!atMost(o.ok.args, args)) return undefined;
  // Larger arguments: the recursion kernels grow about 1.6 times per step of n (fib), the
  // loops with their sizes' product; a guess from the arguments' growth, capped at the limit.
  const grow = args.reduce((g, a, i) => g * Math.max(1, a / Math.max(1, o.ok!.args[i]!)), 1);
  const steps = args.reduce((n, a, i) => n + Math.max(0, a - o.ok!.args[i]!), 0);
  const factor = /^fib_rec/.test(kernel) ? 1.62 ** Math.min(steps, 60) : /^ack/.test(kernel) ? 4 ** Math.min(steps, 30) : grow;
  return Math.min(limitMs, o.ok.wallMs * factor);
}

/** A server cell as POST /api/forecast takes it: POST /api/run's body, without its batch. */
export type ServerCell = Omit<RunRequest, "batch">;

/** The server's forecasts by cell (its request as JSON): ms from its stored runs, or null
 * when asked and none (a guess, a refusal, or no answer yet). */
const serverTimes = new Map<string, number | null>();

/**
 * serverCellTime is how long a server cell is expected to take, in ms, from this machine's
 * stored runs on the server (POST /api/forecast, wasmgap bench's forecast); undefined until
 * known. The first call for a cell asks the server, once, and calls onAnswer when it gives
 * a stored time.
 */
export function serverCellTime(cell: ServerCell, onAnswer: () => void): number | undefined {
  const k = JSON.stringify(cell);
  if (serverTimes.has(k)) return serverTimes.get(k) ?? undefined;
  serverTimes.set(k, null);
  void fetch("/api/forecast", { method: "POST", headers: { "Content-Type": "application/json" }, body: k })
    .then((r) => (r.ok ? (r.json() as Promise<{ ms: number; stored: boolean }>) : undefined))
    .then((a) => {
      if (!a?.stored) return;
      serverTimes.set(k, a.ms);
      onAnswer();
    })
    .catch(() => {
      // No answer only loses the server's forecast of this cell.
    });
  return undefined;
}
