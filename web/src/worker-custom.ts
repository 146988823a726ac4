// The browser-wasm engine for a user's kernel: its module (built by the server, served at
// /api/custom/<id>/kernel.wasm) compiled by the browser, with a WASI shim. There is no
// independent expected value: the first call's value is the one later calls must repeat,
// and the page compares it with the other tiers'.

import { measure } from "./harness";
import type { WorkerRequest, WorkerScope } from "./protocol";
import { explainFailure, loadWasiModule } from "./wasi-module";

const scope = self as unknown as WorkerScope;

scope.onmessage = async (ev: MessageEvent<WorkerRequest>) => {
  const req = ev.data;
  const result = await measure(
    "browser-wasm",
    req,
    async () => {
      if (!req.wasmUrl) throw new Error("no module to run");
      const { exports, output, compileMs: compile, instantiateMs: instantiate } = await loadWasiModule(req.wasmUrl);
      const fn = exports[req.export];
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
            throw explainFailure(err, output, true);
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
