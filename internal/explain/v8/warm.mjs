// Runs one export of kernels.wasm until a warm-up time has passed, so that V8 has compiled
// (and tiered up) the kernel's code, which node prints with --print-wasm-code. Nothing else
// is written to stdout: package explain parses it.
//
//   node [V8 flags] warm.mjs kernels.wasm <export> <warm-up ms> <profile ms> [args...]
//
// With a profile time above 0 it says "warm" on stderr after the warm-up and goes on
// calling while perf samples it, until the file named by WASMGAP_PROFILE_STOP exists.
import { existsSync, readFileSync } from "node:fs";

process.removeAllListeners("warning");
const { WASI } = await import("node:wasi");
const [modulePath, exportName, ms, profileMs, ...rest] = process.argv.slice(2);
const args = rest.map(Number);
const wasi = new WASI({ version: "preview1", args: ["kernels"], env: {}, stdout: 2, stderr: 2, returnOnExit: false });
const { instance } = await WebAssembly.instantiate(readFileSync(modulePath), wasi.getImportObject());
wasi.initialize(instance);
const fn = instance.exports[exportName];
if (typeof fn !== "function") {
  process.stderr.write(`kernels.wasm has no export ${exportName}\n`);
  process.exit(2);
}
const end = process.hrtime.bigint() + BigInt(Number(ms)) * 1000000n;
let calls = 0;
do {
  fn(...args);
  calls++;
} while (process.hrtime.bigint() < end);
process.stderr.write(`warm-up: ${calls} calls\n`);
if (Number(profileMs) > 0) {
  // Calls go on until the file WASMGAP_PROFILE_STOP names exists (perf is done: a machine
  // slow to start perf must not see node end first), at most a minute past the profile.
  process.stderr.write("warm\n");
  const stopFile = process.env.WASMGAP_PROFILE_STOP;
  const limit = process.hrtime.bigint() + BigInt(Number(profileMs) + 60000) * 1000000n;
  let check = 0n;
  for (;;) {
    fn(...args);
    const now = process.hrtime.bigint();
    if (now >= limit) break;
    if (now >= check) {
      if (!stopFile || existsSync(stopFile)) break;
      check = now + 20000000n;
    }
  }
}
