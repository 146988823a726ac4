// Messages between the page and its kernel workers (worker-wasm.ts, worker-js.ts).

import type { CellResult, Progress } from "./types";

/** What the page asks a worker to measure. */
export interface WorkerRequest {
  kernel: string;
  /** The wasm export that runs it: the kernel's name ("test1"), "nop" for host_call. */
  export: string;
  args: number[];
  runs: number;
  warmup: number;
  /** The catalogue's expected value, as a decimal string. */
  expected: string;
  /** How long a sample lasts at least, in ms: shorter calls are repeated k times per
   * sample (0: one call per sample; absent: 10 ms, as the server's default). */
  min_sample_ms?: number;
  /** The time the whole measurement should fit in, load included: samples that would not
   * fit are skipped, and the cell says how many ran (0 or absent: no budget). */
  budget_ms?: number;
  /** How long the warm-up lasts at least, in ms (absent: 500 ms, as the server's default;
   * the server's browser engines pass --warmup-time here). */
  warmup_ms?: number;
  /** browser-wasm only: where kernels.wasm is served. */
  wasmUrl?: string;
  /** When set, the worker times calls for a warm-up series instead of measuring a cell:
   * samples × group calls back to back, each group timed with performance.now(). The
   * kernel stays loaded for the next such request of the same kernel and arguments, so
   * that the series goes on from the first call. */
  times?: { samples: number; group: number };
}

/** A run of timed calls (WorkerRequest.times): each sample's time in ns (group calls
 * each), the first call's value, how many calls gave another value than the expected
 * one, the load's setup (first request only), or why it failed. */
export interface TimedCalls {
  times_ns: number[];
  value: string;
  wrong: number;
  setup?: { compile_ns: number; instantiate_ns: number };
  failure?: string;
}

/** What a worker answers: progress, then one result (which may hold a failure). */
export type WorkerMessage =
  | ({ type: "progress" } & Progress)
  | { type: "result"; result: CellResult };

/** What a worker answers a request of timed calls (WorkerRequest.times): one message. */
export interface TimesMessage {
  type: "times";
  times: TimedCalls;
}

/** The parts of a dedicated worker's global scope the workers use. */
export interface WorkerScope {
  postMessage(message: WorkerMessage | TimesMessage): void;
  onmessage: ((ev: MessageEvent<WorkerRequest>) => void) | null;
}
