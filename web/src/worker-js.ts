// The browser-js engine: the kernels' TypeScript port, measured in this worker.

import { measure } from "./harness";
import { PORTS, portNote, refusal } from "./kernels";
import type { WorkerRequest, WorkerScope } from "./protocol";

const scope = self as unknown as WorkerScope;

scope.onmessage = async (ev: MessageEvent<WorkerRequest>) => {
  const req = ev.data;
  const result = await measure(
    "browser-js",
    req,
    async () => {
      const port = PORTS[req.kernel];
      if (!port) throw new Error(`no JavaScript port of ${req.kernel}`);
      const refused = refusal(req.kernel, req.args);
      if (refused) throw new Error(refused);
      const args = req.args;
      return { setup: { compile_ns: 0, instantiate_ns: 0 }, call: () => port(args), note: portNote(req.kernel, args) };
    },
    (m) => scope.postMessage(m),
  );
  if (result.failure?.startsWith("failed to load: refused")) result.failure = result.failure.slice("failed to load: ".length);
  scope.postMessage({ type: "result", result });
};
