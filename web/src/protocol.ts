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
}

/** What a worker answers: progress, then one result (which may hold a failure). */
export type WorkerMessage =
  | ({ type: "progress" } & Progress)
  | { type: "result"; result: CellResult };

/** The parts of a dedicated worker's global scope the workers use. */
export interface WorkerScope {
  postMessage(message: WorkerMessage): void;
  onmessage: ((ev: MessageEvent<WorkerRequest>) => void) | null;
}
