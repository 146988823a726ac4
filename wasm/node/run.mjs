#!/usr/bin/env node
// Runs one kernel of kernels.wasm under Node's node:wasi and prints its result.
//
//   node wasm/node/run.mjs wasm/kernels.wasm fib_rec 30
//   node wasm/node/run.mjs wasm/kernels.wasm ack 3 10
//
// With --time it also prints how long the call took, on stderr.
// The module is a WASI preview1 reactor: instantiate it with the WASI imports, call
// _initialize once (wasi.initialize does), then call any kernel export, one at a time.
import { readFile } from "node:fs/promises";
import { performance } from "node:perf_hooks";

// node:wasi is marked experimental in Node 20 and says so on stderr; keep every other warning.
process.removeAllListeners("warning");
process.on("warning", (w) => {
  if (!(w.name === "ExperimentalWarning" && /WASI/.test(w.message))) console.warn(w);
});
const { WASI } = await import("node:wasi");

const usage = "usage: node run.mjs [--time] path/to/kernels.wasm EXPORT ARG...";

function fail(message) {
  process.stderr.write(`run.mjs: ${message}\n${usage}\n`);
  process.exit(2);
}

const argv = process.argv.slice(2);
const time = argv[0] === "--time";
if (time) argv.shift();
if (argv.length < 2) fail("missing the module path or the export name");
const [path, name, ...rest] = argv;

const args = rest.map((a) => {
  if (!/^-?\d+$/.test(a)) fail(`argument ${JSON.stringify(a)} is not an integer`);
  const n = Number(a);
  if (n < -(2 ** 31) || n >= 2 ** 31) fail(`argument ${a} does not fit an i32`);
  return n;
});

let bytes;
try {
  bytes = await readFile(path);
} catch (err) {
  fail(`read ${path}: ${err.message}`);
}

// stdout and stderr of the module go to this process's: the Go runtime prints why it
// aborts there (stack overflow, out of memory).
const wasi = new WASI({ version: "preview1", args: [], env: {}, returnOnExit: true });
let instance;
try {
  ({ instance } = await WebAssembly.instantiate(bytes, wasi.getImportObject()));
} catch (err) {
  fail(`instantiate ${path}: ${err.message}`);
}
wasi.initialize(instance); // runs _initialize: the Go runtime's start-up

const fn = instance.exports[name];
const kernels = Object.keys(instance.exports).filter(
  (e) => typeof instance.exports[e] === "function" && !e.startsWith("_"),
);
if (typeof fn !== "function" || name.startsWith("_")) {
  fail(`no kernel export ${JSON.stringify(name)}: the exports are ${kernels.join(", ")}`);
}
if (args.length !== fn.length) {
  fail(`${name} takes ${fn.length} arguments, got ${args.length}`);
}

let result;
const start = performance.now();
try {
  result = fn(...args); // an i64 result arrives as a BigInt
} catch (err) {
  // A trap (RangeError "Maximum call stack size exceeded" is V8's stack overflow).
  process.stderr.write(`run.mjs: ${name}(${args.join(", ")}): ${err}\n`);
  process.exit(1);
}
const elapsed = performance.now() - start;
process.stdout.write(`${result}\n`);
if (time) process.stderr.write(`${name}(${args.join(", ")}) took ${elapsed.toFixed(3)} ms\n`);
