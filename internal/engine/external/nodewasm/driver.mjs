// The node-wasm driver: kernels.wasm (the Go kernels built for GOOS=wasip1, package wasm)
// compiled by Node's V8 and run through node:wasi, serving the line protocol of package
// peers (see ../peers.go): one request a line on stdin, one answer a line on stdout.
//
//   node driver.mjs kernels.wasm catalogue.json
//
// catalogue.json lists the kernels as package kernels' catalogue does (name, export,
// parameters with their ranges), written beside this file by package peers, so that the
// driver checks arguments against the same ranges as every other driver.
//
// The module is a WASI preview1 reactor: instantiated once, _initialize called once
// (wasi.initialize), then one export call per kernel call. A call that throws (V8's stack
// overflow, a trap) or ends the module's Go runtime (its own stack limit: it prints why on
// stderr and calls proc_exit) leaves the instance unusable: the driver answers the error,
// or says nothing when the runtime exited, and exits.
import { readFileSync, writeSync } from "node:fs";
import { createInterface } from "node:readline";

// node:wasi is marked experimental in Node 20 and says so on stderr; keep every other warning.
process.removeAllListeners("warning");
process.on("warning", (w) => {
  if (!(w.name === "ExperimentalWarning" && /WASI/.test(w.message))) console.warn(w);
});
const { WASI } = await import("node:wasi");

const MAX_REPS = 1000000000;
const USAGE = "want <kernel> <reps> [<arg1> [<arg2>]]";
const INT = /^[+-]?[0-9]+$/;

function die(message) {
  process.stderr.write(`node-wasm driver: ${message}\nusage: node driver.mjs kernels.wasm catalogue.json\n`);
  process.exit(2);
}

const [modulePath, cataloguePath] = process.argv.slice(2);
if (!modulePath || !cataloguePath) die("missing the module or the catalogue path");

let catalogue;
try {
  catalogue = JSON.parse(readFileSync(cataloguePath, "utf8"));
} catch (err) {
  die(`read ${cataloguePath}: ${err.message}`);
}

// stdout is the protocol's: the module's own fd 1 goes to stderr with its fd 2.
const wasi = new WASI({ version: "preview1", args: ["kernels"], env: {}, stdout: 2, stderr: 2, returnOnExit: false });
let instance;
try {
  const bytes = readFileSync(modulePath);
  ({ instance } = await WebAssembly.instantiate(bytes, wasi.getImportObject()));
} catch (err) {
  die(`instantiate ${modulePath}: ${err.message}`);
}
wasi.initialize(instance); // runs _initialize: the Go runtime's start-up

const KERNELS = {};
for (const k of catalogue) {
  const fn = instance.exports[k.export];
  if (typeof fn !== "function") die(`kernels.wasm has no export ${k.export} (kernel ${k.name})`);
  KERNELS[k.name] = { params: k.params, fn };
}

// calls makes reps calls and returns the first value and the sum wrapped to int64; an i64
// result arrives as a BigInt.
function calls(fn, args, reps) {
  const first = fn(...args);
  let sum = first;
  for (let r = 1; r < reps; r++) sum = BigInt.asIntN(64, sum + fn(...args));
  return [first, sum];
}

const MAX_SAMPLES = 1000;
const TIMES_USAGE = "want times <kernel> <samples> <group> [<arg1> [<arg2>]]";

// parse checks a request's fields, <kernel> <reps> <args...>: the kernel, its name, reps
// and arguments, or { answer } with the error answer.
function parse(f) {
  if (f.length === 1 && f[0] === "") return { answer: `error empty request: ${USAGE}` };
  if (f.length < 2) return { answer: `error too few fields: ${USAGE}` };
  if (f.length > 4) return { answer: `error too many fields: ${USAGE}` };
  const name = f[0];
  const k = Object.hasOwn(KERNELS, name) ? KERNELS[name] : undefined;
  if (k === undefined) return { answer: `error unknown kernel "${name}"` };
  // Only a kernel without parameters (host_call: the export nop) is called with none.
  if (f.length < 3 && k.params.length > 0) return { answer: `error too few fields: ${USAGE}` };
  const reps = INT.test(f[1]) ? Number(f[1]) : 0;
  if (reps < 1 || reps > MAX_REPS) {
    return { answer: `error reps "${f[1]}" is not allowed: want an integer from 1 to ${MAX_REPS}` };
  }
  if (f.length - 2 !== k.params.length) {
    return { answer: `error ${name} takes ${k.params.length} arguments, got ${f.length - 2}` };
  }
  const args = [];
  for (let i = 0; i < k.params.length; i++) {
    const p = k.params[i];
    const s = f[2 + i];
    if (!INT.test(s)) return { answer: `error ${name}: ${p.name} = "${s}" is not an integer` };
    const v = Number(s);
    if (v < p.min || v > p.max) {
      return { answer: `error ${name}: ${p.name} = "${s}" is out of range: allowed ${p.min} to ${p.max}` };
    }
    args.push(v);
  }
  return { name, k, reps, args };
}

// failure is the answer to an exception a kernel threw: the instance cannot serve another.
function failure(name, e) {
  if (e instanceof RangeError && /call stack/i.test(e.message)) {
    return { answer: `error stack overflow: ${name} exhausted V8's stack (RangeError: ${e.message})`, fatal: true };
  }
  return { answer: `error ${name}: ${e}`.replace(/\n/g, " "), fatal: true };
}

// serveTimes answers "times <kernel> <samples> <group> <args...>" (f without "times"):
// samples × group calls, the clock read between every group.
function serveTimes(f) {
  if (f.length < 3) return { answer: `error too few fields: ${TIMES_USAGE}` };
  const samples = INT.test(f[1]) ? Number(f[1]) : 0;
  if (samples < 1 || samples > MAX_SAMPLES) {
    return { answer: `error samples "${f[1]}" is not allowed: want an integer from 1 to ${MAX_SAMPLES}` };
  }
  const p = parse([f[0], ...f.slice(2)]);
  if (p.answer !== undefined) return p;
  const times = new Array(samples);
  let first;
  let sum = 0n;
  try {
    for (let i = 0; i < samples; i++) {
      const start = process.hrtime.bigint();
      const [v, part] = calls(p.k.fn, p.args, p.reps);
      times[i] = process.hrtime.bigint() - start;
      if (i === 0) first = v;
      sum = BigInt.asIntN(64, sum + part);
    }
  } catch (e) {
    return failure(p.name, e);
  }
  return { answer: `times ${first} ${sum} ${times.join(" ")}` };
}

// serve answers one request; fatal is set when the instance cannot serve another.
function serve(line) {
  const f = line.trim().split(/[ \t]+/);
  if (f[0] === "times") return serveTimes(f.slice(1));
  const p = parse(f);
  if (p.answer !== undefined) return p;
  const start = process.hrtime.bigint();
  let first;
  let sum;
  try {
    [first, sum] = calls(p.k.fn, p.args, p.reps);
  } catch (e) {
    return failure(p.name, e);
  }
  const elapsed = process.hrtime.bigint() - start;
  return { answer: `ok ${first} ${sum} ${elapsed}` };
}

// The protocol's file descriptor: stdout, or the one WASMGAP_DRIVER_FD names when the
// runtime's own stdout is taken (V8's --print-wasm-code writes there from any thread).
const OUT = Number(process.env.WASMGAP_DRIVER_FD || 1);
const say = (line) => writeSync(OUT, `${line}\n`);
say(`ready wasm node ${process.version} (V8 ${process.versions.v8})`);
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
rl.on("line", (line) => {
  const { answer, fatal } = serve(line);
  say(answer);
  if (fatal) {
    rl.close();
    process.exit(1);
  }
});
