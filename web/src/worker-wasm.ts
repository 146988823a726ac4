// The browser-wasm engine: kernels.wasm (the Go kernels built for GOOS=wasip1 as a WASI
// reactor) compiled by the browser's engine, with a WASI shim for its few imports.

import { serveWasiWorker } from "./wasi-module";

serveWasiWorker({
  noModule: "this build has no kernels.wasm (run `go tool task build` with wasm/module present)",
  moduleName: "kernels.wasm",
  userKernel: false,
});
