// The browser-wasm engine: kernels.wasm (the Go kernels built for GOOS=wasip1 as a WASI
// reactor) compiled by the browser's engine, with a WASI shim for its few imports.

import { ConsoleStdout, OpenFile, File, WASI, WASIProcExit } from "@bjorn3/browser_wasi_shim";
import { measure, failureOf } from "./harness";
import type { WorkerRequest, WorkerScope } from "./protocol";

const scope = self as unknown as WorkerScope;

interface KernelExports {
  memory: WebAssembly.Memory;
  _initialize?: () => unknown;
  [name: string]: unknown;
}

scope.onmessage = async (ev: MessageEvent<WorkerRequest>) => {
  const req = ev.data;
  const stderr: string[] = [];
  const result = await measure(
    "browser-wasm",
    req,
    async () => {
      if (!req.wasmUrl) throw new Error("this build has no kernels.wasm (run `go tool task build` with wasm/module present)");
      const resp = await fetch(req.wasmUrl);
      if (!resp.ok) throw new Error(`fetch ${req.wasmUrl}: ${resp.status} ${resp.statusText}`);
      const bytes = await resp.arrayBuffer();
      let t0 = performance.now();
      const module = await WebAssembly.compile(bytes);
      const compile = performance.now() - t0;

      const fds = [
        new OpenFile(new File([])), // stdin
        ConsoleStdout.lineBuffered((line) => stderr.push(line)), // stdout
        ConsoleStdout.lineBuffered((line) => stderr.push(line)), // stderr
      ];
      const wasi = new WASI([], [], fds, { debug: false });
      t0 = performance.now();
      const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi.wasiImport });
      const exports = instance.exports as unknown as KernelExports;
      wasi.initialize(instance as unknown as { exports: { memory: WebAssembly.Memory; _initialize?: () => unknown } });
      const instantiate = performance.now() - t0;

      const fn = exports[req.export];
      if (typeof fn !== "function") throw new Error(`kernels.wasm has no export ${req.export}`);
      const kernel = fn as (...args: number[]) => bigint;
      // A closure of the export's arity: no spread of the arguments in the timed loop.
      const [a0 = 0, a1 = 0] = req.args;
      const call = req.args.length === 1 ? () => kernel(a0) : req.args.length === 2 ? () => kernel(a0, a1) : () => kernel(...req.args);
      return {
        setup: { compile_ns: Math.round(compile * 1e6), instantiate_ns: Math.round(instantiate * 1e6) },
        call,
        explain: (err: unknown) => explain(err, stderr),
      };
    },
    (m) => scope.postMessage(m),
  );
  scope.postMessage({ type: "result", result });
};

/** explain turns a trap or the Go runtime's exit into an error naming what happened. */
function explain(err: unknown, stderr: string[]): Error {
  const said = stderr.join("\n");
  if (/stack overflow|stack exceeds|morestack/i.test(said)) return new Error("stack overflow");
  if (err instanceof WASIProcExit) {
    return new Error(`exited with code ${err.code}${said ? ": " + said.split("\n").slice(0, 3).join(" ") : ""}`);
  }
  if (err instanceof Error && failureOf(err) === "stack overflow") return new Error("stack overflow");
  return err instanceof Error ? err : new Error(String(err));
}
