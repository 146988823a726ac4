// Running one cell (a kernel with its arguments on one engine), on the server through
// POST /api/run or in the page through a fresh Web Worker, with progress and cancellation.

import { APIFailure, fetchExpected, runOnServer } from "./api";
import type { WorkerMessage, WorkerRequest } from "./protocol";
import type { CellResult, Kernel, Progress } from "./types";

/** Everything needed to run one cell. */
export interface CellJob {
  kernel: Kernel;
  args: number[];
  engine: string;
  runs: number;
  warmup: number;
  /** How long a sample lasts at least, in ms (0: one call per sample). */
  minSampleMs: number;
  /** How long a warm-up lasts at least, in ms (0: its warmup calls alone). */
  warmupMs: number;
  /** The page's Run, for the server to store its cells as one run (rundoc's newBatch). */
  batch?: string;
  /** This cell's time limit, in ms, when below the server's. */
  timeoutMs?: number;
}

/** Where a cell stands. */
export type CellState =
  | { kind: "idle" }
  | { kind: "pending" }
  | { kind: "queued"; position: number }
  /** since: when the cell started running, in ms since the epoch (runCell stamps it). */
  | { kind: "running"; progress?: Progress; since?: number }
  | { kind: "done"; result: CellResult }
  | { kind: "error"; message: string; field?: string }
  | { kind: "cancelled" }
  /** A kernel the engine does not run (engines' runs): host_call off kernels.wasm. */
  | { kind: "na" };

/** What the page knows of its own bundle (web/dist/manifest.json's files). */
export interface Bundle {
  files: Record<string, string>;
}

/** A cell on its way: its outcome, and how to stop it. */
export interface CellRun {
  done: Promise<CellState>;
  cancel(): void;
}

/** The arguments by parameter name. */
export function namedArgs(kernel: Kernel, args: number[]): Record<string, number> {
  const named: Record<string, number> = {};
  kernel.params.forEach((p, i) => {
    named[p.name] = args[i] ?? p.default;
  });
  return named;
}

/** The share of a cell's time limit its samples should fit in, as the server's runs budget
 * (runner's budgetShare): samples that would not fit are skipped, and the cell says how
 * many ran. */
export const BUDGET_SHARE = 0.85;

export function isBrowserEngine(engine: string): boolean {
  return engine.startsWith("browser-");
}

/** runCell starts one cell; update receives its intermediate states. */
export function runCell(job: CellJob, bundle: Bundle, timeoutMs: number, update: (s: CellState) => void): CellRun {
  // Every running state carries when the cell started running, for its elapsed seconds.
  let since: number | undefined;
  const stamped = (st: CellState): void => {
    if (st.kind === "running") update({ ...st, since: (since ??= Date.now()) });
    else update(st);
  };
  return isBrowserEngine(job.engine) ? runInBrowser(job, bundle, timeoutMs, stamped) : runOnServerCell(job, stamped);
}

function runOnServerCell(job: CellJob, update: (s: CellState) => void): CellRun {
  const abort = new AbortController();
  const done = (async (): Promise<CellState> => {
    let final: CellState | undefined;
    try {
      await runOnServer(
        {
          kernel: job.kernel.name,
          engine: job.engine,
          args: namedArgs(job.kernel, job.args),
          runs: job.runs,
          warmup: job.warmup,
          min_sample_ms: job.minSampleMs,
          warmup_ms: job.warmupMs,
          batch: job.batch,
          timeout_ms: job.timeoutMs,
        },
        abort.signal,
        (e) => {
          switch (e.type) {
            case "queued":
              update({ kind: "queued", position: e.position ?? 0 });
              break;
            case "started":
              update({ kind: "running" });
              break;
            case "progress":
              update({ kind: "running", progress: { phase: e.phase ?? "", done: e.done ?? 0, total: e.total ?? 0 } });
              break;
            case "result": {
              const r = e.result;
              if (!r) break;
              const result: CellResult = {
                kernel: r.kernel,
                args: r.args,
                engine: r.engine,
                where: "server",
                runs: r.runs,
                warmup: r.warmup,
                calls: r.calls ?? 1,
                min_sample_ns: job.minSampleMs * 1e6,
                value: e.value ?? String(r.value),
                expected: e.expected ?? String(r.expected),
                samples_ns: r.samples_ns ?? [],
                min_ns: r.min_ns,
                median_ns: r.median_ns,
                max_ns: r.max_ns,
                ci: r.ci && r.ci.level ? r.ci : undefined,
                // The worker processes that measured it: the ratios' intervals come from them.
                executions: r.executions,
                first_ns: r.first_ns,
                noise: r.noise,
                setup: r.setup,
                failure: r.failure,
                server: e.environment,
                run: e.run,
              };
              final = { kind: "done", result };
              break;
            }
            case "error":
              final = { kind: "error", message: e.error ?? "the run failed" };
              break;
          }
        },
      );
    } catch (err) {
      if (abort.signal.aborted) return { kind: "cancelled" };
      if (err instanceof APIFailure) return { kind: "error", message: err.message, field: err.field };
      return { kind: "error", message: err instanceof Error ? err.message : String(err) };
    }
    if (abort.signal.aborted) return { kind: "cancelled" };
    return final ?? { kind: "error", message: "the server closed the stream before the result" };
  })();
  return { done, cancel: () => abort.abort() };
}

/**
 * cellWorker is a cell run in a Web Worker of its own: done settles once, with the first
 * state finish gives, which also ends the worker. start runs the worker's script on req:
 * its progress goes to update, its result (through result) settles done, and so do its
 * failure, named after what, and the time limit, with timedOut.
 */
export function cellWorker(update: (s: CellState) => void) {
  let worker: Worker | undefined;
  let settle: ((s: CellState) => void) | undefined;
  const done = new Promise<CellState>((resolve) => {
    settle = resolve;
  });
  const finish = (s: CellState): void => {
    worker?.terminate();
    worker = undefined;
    settle?.(s);
    settle = undefined;
  };
  const start = (script: string, name: string, what: string, req: WorkerRequest, timeoutMs: number, timedOut: CellResult, result = (r: CellResult) => r): void => {
    update({ kind: "running" });
    worker = new Worker(`/${script}`, { type: "module", name });
    const timer = setTimeout(() => finish({ kind: "done", result: timedOut }), timeoutMs);
    void done.finally(() => clearTimeout(timer));
    worker.onmessage = (ev: MessageEvent<WorkerMessage>) => {
      const m = ev.data;
      if (m.type === "progress") update({ kind: "running", progress: { phase: m.phase, done: m.done, total: m.total } });
      else finish({ kind: "done", result: result(m.result) });
    };
    worker.onerror = (ev: ErrorEvent) => {
      ev.preventDefault();
      finish({ kind: "error", message: `the ${what} worker failed: ${ev.message || "could not start"}` });
    };
    worker.postMessage(req);
  };
  return { done, finish, start };
}

function runInBrowser(job: CellJob, bundle: Bundle, timeoutMs: number, update: (s: CellState) => void): CellRun {
  const abort = new AbortController();
  const { done, finish, start } = cellWorker(update);
  (async () => {
    let expected: string;
    try {
      // The server checks the arguments and computes the catalogue's expected value.
      expected = await fetchExpected(job.kernel.name, namedArgs(job.kernel, job.args), abort.signal);
    } catch (err) {
      if (abort.signal.aborted) return finish({ kind: "cancelled" });
      if (err instanceof APIFailure) return finish({ kind: "error", message: err.message, field: err.field });
      return finish({ kind: "error", message: err instanceof Error ? err.message : String(err) });
    }
    if (abort.signal.aborted) return finish({ kind: "cancelled" });
    const script = bundle.files[job.engine === "browser-wasm" ? "worker-wasm.js" : "worker-js.js"];
    if (!script) return finish({ kind: "error", message: `this build has no worker for ${job.engine}` });
    const wasm = bundle.files["kernels.wasm"];
    if (job.engine === "browser-wasm" && !wasm) {
      return finish({ kind: "error", message: "this build has no kernels.wasm: build it with `go tool task build`" });
    }
    const timedOut: CellResult = {
      kernel: job.kernel.name, args: job.args, engine: job.engine, where: "browser", runs: job.runs, warmup: job.warmup, calls: 1,
      value: "", expected, samples_ns: [], min_ns: 0, median_ns: 0, max_ns: 0,
      setup: { compile_ns: 0, instantiate_ns: 0 }, failure: `timed out after ${Math.round(timeoutMs / 1000)}s`,
    };
    const req: WorkerRequest = {
      kernel: job.kernel.name,
      export: job.kernel.export,
      args: job.args,
      runs: job.runs,
      warmup: job.warmup,
      expected,
      min_sample_ms: job.minSampleMs,
      warmup_ms: job.warmupMs,
      // Samples that would not end well inside the worker's time limit are skipped.
      budget_ms: timeoutMs * BUDGET_SHARE,
      wasmUrl: wasm ? `/${wasm}` : undefined,
    };
    start(script, job.engine, job.engine, req, timeoutMs, timedOut);
  })();
  return {
    done,
    cancel: () => {
      abort.abort();
      finish({ kind: "cancelled" });
    },
  };
}
