// The browser-wasm engine for a user's kernel: its module (built by the server, served at
// /api/custom/<id>/kernel.wasm) compiled by the browser, with a WASI shim. There is no
// independent expected value: the first call's value is the one later calls must repeat,
// and the page compares it with the other tiers'.

import { ConsoleStdout, File, OpenFile, WASI, WASIProcExit } from "@bjorn3/browser_wasi_shim";
import { failureOf, measure } from "./harness";
import type { WorkerRequest, WorkerScope } from "./protocol";

const scope = self as unknown as WorkerScope;

scope.onmessage = async (ev: MessageEvent<WorkerRequest>) => {
  const req = ev.data;
  const output: string[] = [];
  const result = await measure(
    "browser-wasm",
    req,
    async () => {
      if (!req.wasmUrl) throw new Error("no module to run");
      const resp = await fetch(req.wasmUrl);
      if (!resp.ok) throw new Error(`fetch ${req.wasmUrl}: ${resp.status} ${resp.statusText}`);
      const bytes = await resp.arrayBuffer();
      let t0 = performance.now();
      const module = await WebAssembly.compile(bytes);
      const compile = performance.now() - t0;
      const fds = [
        new OpenFile(new File([])),
        ConsoleStdout.lineBuffered((line) => output.push(line)),
        ConsoleStdout.lineBuffered((line) => output.push(line)),
      ];
      const wasi = new WASI([], [], fds, { debug: false });
      t0 = performance.now();
      const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi.wasiImport });
      wasi.initialize(instance as unknown as { exports: { memory: WebAssembly.Memory; _initialize?: () => unknown } });
      const instantiate = performance.now() - t0;
      const fn = (instance.exports as Record<string, unknown>)[req.export];
      if (typeof fn !== "function") throw new Error(`the module has no export ${req.export}`);
      const kernel = fn as (...args: number[]) => bigint;
      let first = true;
      return {
        setup: { compile_ns: Math.round(compile * 1e6), instantiate_ns: Math.round(instantiate * 1e6) },
        call: () => {
          let v: bigint;
          try {
            v = kernel(...req.args);
          } catch (err) {
            throw explain(err, output);
          }
          if (first) {
            // The harness checks every value against req.expected: the first call sets it.
            first = false;
            req.expected = String(v);
          }
          return v;
        },
      };
    },
    (m) => scope.postMessage(m),
  );
  if (!result.failure) result.expected = result.value;
  scope.postMessage({ type: "result", result });
};

/** explain turns a trap or the Go runtime's exit into an error naming what happened. */
function explain(err: unknown, output: string[]): Error {
  const said = output.join("\n");
  if (/stack overflow|stack exceeds|morestack/i.test(said)) return new Error("stack overflow");
  const first = said.split("\n").slice(0, 3).join(" ");
  if (err instanceof WASIProcExit) return new Error(`exited with code ${err.code}${first ? ": " + first : ""}`);
  if (err instanceof Error && failureOf(err) === "stack overflow") return new Error("stack overflow");
  if (first) return new Error(`${err instanceof Error ? err.message : String(err)}: ${first}`);
  return err instanceof Error ? err : new Error(String(err));
}
