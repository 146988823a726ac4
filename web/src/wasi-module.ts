// One WASI module in a Web Worker: fetched, compiled and instantiated with the WASI shim
// for its few imports, its output kept so that a failure can say what the module printed.
// The browser-wasm engines (kernels.wasm, and a user's kernel) load their module here.

import { ConsoleStdout, File, OpenFile, WASI, WASIProcExit } from "@bjorn3/browser_wasi_shim";
import { failureOf, serveMeasurements } from "./harness";

/** A module ready to call, with the times its setup took. */
export interface WasiModule {
  exports: Record<string, unknown>;
  /** What the module wrote to stdout and stderr, line by line. */
  output: string[];
  compileMs: number;
  instantiateMs: number;
}

/** loadWasiModule fetches the module at url, compiles it and instantiates it as a WASI reactor. */
export async function loadWasiModule(url: string): Promise<WasiModule> {
  const resp = await fetch(url);
  if (!resp.ok) throw new Error(`fetch ${url}: ${resp.status} ${resp.statusText}`);
  const bytes = await resp.arrayBuffer();
  let t0 = performance.now();
  const module = await WebAssembly.compile(bytes);
  const compileMs = performance.now() - t0;

  const output: string[] = [];
  const fds = [
    new OpenFile(new File([])), // stdin
    ConsoleStdout.lineBuffered((line) => output.push(line)), // stdout
    ConsoleStdout.lineBuffered((line) => output.push(line)), // stderr
  ];
  const wasi = new WASI([], [], fds, { debug: false });
  t0 = performance.now();
  const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi.wasiImport });
  wasi.initialize(instance as unknown as { exports: { memory: WebAssembly.Memory; _initialize?: () => unknown } });
  const instantiateMs = performance.now() - t0;
  return { exports: instance.exports as Record<string, unknown>, output, compileMs, instantiateMs };
}

/**
 * explainFailure turns a trap or the Go runtime's exit into an error naming what happened:
 * "stack overflow", "exited with code N: <what it printed>", or the trap itself — followed
 * by the first lines the module printed when withOutput is set.
 */
export function explainFailure(err: unknown, output: string[], withOutput: boolean): Error {
  const said = output.join("\n");
  if (/stack overflow|stack exceeds|morestack/i.test(said)) return new Error("stack overflow");
  const first = said.split("\n").slice(0, 3).join(" ");
  if (err instanceof WASIProcExit) return new Error(`exited with code ${err.code}${first ? ": " + first : ""}`);
  if (err instanceof Error && failureOf(err) === "stack overflow") return new Error("stack overflow");
  if (withOutput && first) return new Error(`${err instanceof Error ? err.message : String(err)}: ${first}`);
  return err instanceof Error ? err : new Error(String(err));
}

/** bindArgs returns a call of the export with args bound in a closure of its arity: no
 * spread of the arguments in the timed loop (the kernels take one or two). */
export function bindArgs(fn: (...args: number[]) => bigint, args: readonly number[]): () => bigint {
  const [a0 = 0, a1 = 0] = args;
  switch (args.length) {
    case 0:
      return () => fn();
    case 1:
      return () => fn(a0);
    case 2:
      return () => fn(a0, a1);
  }
  const all = [...args];
  return () => fn(...all);
}

/** How a browser-wasm worker names its module and treats its kernel. */
export interface WasiWorkerKind {
  /** The failure when the request names no module. */
  noModule: string;
  /** The module as a failure names it ("kernels.wasm", "the module"). */
  moduleName: string;
  /** A user's kernel: no catalogue value (the first call's is the one every later call
   * must repeat: the harness's expectFirst), and a failure quotes what it printed. */
  userKernel: boolean;
}

/** serveWasiWorker makes this Web Worker the browser-wasm engine for one kind of module:
 * each request loads its module, binds the export to the arguments and measures it. */
export function serveWasiWorker(kind: WasiWorkerKind): void {
  serveMeasurements("browser-wasm", async (req) => {
    if (!req.wasmUrl) throw new Error(kind.noModule);
    const { exports, output, compileMs: compile, instantiateMs: instantiate } = await loadWasiModule(req.wasmUrl);
    const fn = exports[req.export];
    if (typeof fn !== "function") throw new Error(`${kind.moduleName} has no export ${req.export}`);
    return {
      setup: { compile_ns: Math.round(compile * 1e6), instantiate_ns: Math.round(instantiate * 1e6) },
      // The arguments bound: no spread per call.
      call: bindArgs(fn as (...args: number[]) => bigint, req.args),
      explain: (err: unknown) => explainFailure(err, output, kind.userKernel),
      expectFirst: kind.userKernel,
    };
  });
}
