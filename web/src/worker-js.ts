// The browser-js engine: the kernels' TypeScript port, measured in this worker.

import { serveMeasurements } from "./harness";
import { PORTS, portNote, refusal } from "./kernels";

serveMeasurements(
  "browser-js",
  async (req) => {
    const port = PORTS[req.kernel];
    if (!port) throw new Error(`no JavaScript port of ${req.kernel}`);
    const refused = refusal(req.kernel, req.args);
    if (refused) throw new Error(refused);
    const args = req.args;
    return { setup: { compile_ns: 0, instantiate_ns: 0 }, call: () => port(args), note: portNote(req.kernel, args) };
  },
  (result) => {
    if (result.failure?.startsWith("failed to load: refused")) result.failure = result.failure.slice("failed to load: ".length);
  },
);
