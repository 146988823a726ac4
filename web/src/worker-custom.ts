// The browser-wasm engine for a user's kernel: its module (built by the server, served at
// /api/custom/<id>/kernel.wasm) compiled by the browser, with a WASI shim. There is no
// independent expected value: the first call's value is the one later calls must repeat,
// and the page compares it with the other tiers'.

import { measure } from "./harness";
import type { WorkerRequest, WorkerScope } from "./protocol";
import { bindArgs, explainFailure, loadWasiModule } from "./wasi-module";

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
      return {
        setup: { compile_ns: Math.round(compile * 1e6), instantiate_ns: Math.round(instantiate * 1e6) },
        // The catalogue kernels' call: the arguments bound, no spread per call.
        call: bindArgs(fn as (...args: number[]) => bigint, req.args),
        explain: (err: unknown) => explainFailure(err, output, true),
        // There is no catalogue value: the first call's is the one every later call must repeat.
        expectFirst: true,
      };
    },
    (m) => scope.postMessage(m),
  );
  if (!result.failure) result.expected = result.value;
  scope.postMessage({ type: "result", result });
};
