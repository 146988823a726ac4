// The browser-wasm engine for a user's kernel: its module (built by the server, served at
// /api/custom/<id>/kernel.wasm) compiled by the browser, with a WASI shim. There is no
// independent expected value: the first call's value is the one later calls must repeat,
// and the page compares it with the other tiers'.

import { serveWasiWorker } from "./wasi-module";

serveWasiWorker({ noModule: "no module to run", moduleName: "the module", userKernel: true });
