// The browser-wasm engine: kernels.wasm (the Go kernels built for GOOS=wasip1 as a WASI
// reactor) compiled by the browser's engine, with a WASI shim for its few imports.

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
      if (!req.wasmUrl) throw new Error("this build has no kernels.wasm (run `go tool task build` with wasm/module present)");
      const { exports, output, compileMs: compile, instantiateMs: instantiate } = await loadWasiModule(req.wasmUrl);

      const fn = exports[req.export];
      if (typeof fn !== "function") throw new Error(`kernels.wasm has no export ${req.export}`);
      const call = bindArgs(fn as (...args: number[]) => bigint, req.args);
      return {
        setup: { compile_ns: Math.round(compile * 1e6), instantiate_ns: Math.round(instantiate * 1e6) },
        call,
        explain: (err: unknown) => explainFailure(err, output, false),
      };
    },
    (m) => scope.postMessage(m),
  );
  scope.postMessage({ type: "result", result });
};
