// @wasmgap/kernels: kernels.wasm (the source articles' kernels compiled by Go to a WASI
// preview1 reactor) with a loader for Node >= 20 and browsers. No dependencies: in Node it
// uses node:wasi, elsewhere a minimal WASI preview1 shim of its own (below).
//
//   import { load } from "@wasmgap/kernels";
//   const k = await load();
//   k.fib_it(10); // 55n
//
// One call at a time per instance: the Go runtime inside is single-threaded and not
// re-entrant. Load one instance per worker to run calls in parallel. An instance whose call
// threw (a trap) refuses further calls: load a new one (k.reload()).
import { kernels } from "./catalogue.mjs";

export { kernels };

const isNode = typeof process !== "undefined" && !!process.versions?.node;

// nodeImport imports a node: module only when running in Node; the specifier is a variable so
// that bundlers targeting browsers leave it alone.
const nodeImport = (specifier) => import(/* webpackIgnore: true */ /* @vite-ignore */ specifier);

/** The error the builtin shim throws when the module calls proc_exit. */
export class WasiExit extends Error {
  constructor(code) {
    super(`kernels.wasm exited with code ${code}`);
    this.name = "WasiExit";
    this.code = code;
  }
}

// WASI errno values the shim returns.
const ESUCCESS = 0;
const EBADF = 8;
const EINVAL = 28;
const ENOSYS = 52;

/**
 * builtinWasi returns a minimal wasi_snapshot_preview1 import object for module: what the
 * Go runtime needs to start and to report an abort (empty args and environment, the clocks,
 * random bytes, fd_write of stdout/stderr to the console, no preopened directories), and
 * ENOSYS for any other import. Call setInstance before _initialize.
 */
export function builtinWasi(module, { stdout, stderr } = {}) {
  let memory;
  const view = () => new DataView(memory.buffer);
  const bytes = () => new Uint8Array(memory.buffer);
  const decoders = [null, new TextDecoder(), new TextDecoder()];
  const pending = ["", "", ""];
  const sinks = [
    null,
    stdout ?? ((line) => console.log(line)),
    stderr ?? ((line) => console.error(line)),
  ];
  const emit = (fd, text) => {
    pending[fd] += text;
    const lines = pending[fd].split("\n");
    pending[fd] = lines.pop();
    for (const line of lines) sinks[fd](line);
  };
  const wasi = {
    args_sizes_get(argc, size) {
      view().setUint32(argc, 0, true);
      view().setUint32(size, 0, true);
      return ESUCCESS;
    },
    args_get() {
      return ESUCCESS;
    },
    environ_sizes_get(count, size) {
      view().setUint32(count, 0, true);
      view().setUint32(size, 0, true);
      return ESUCCESS;
    },
    environ_get() {
      return ESUCCESS;
    },
    clock_time_get(id, _precision, out) {
      let ns;
      if (id === 0) ns = BigInt(Date.now()) * 1000000n; // realtime
      else if (id === 1) ns = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6)); // monotonic
      else return EINVAL;
      view().setBigUint64(out, ns, true);
      return ESUCCESS;
    },
    random_get(buf, len) {
      const b = bytes();
      for (let off = 0; off < len; off += 65536) {
        crypto.getRandomValues(b.subarray(buf + off, buf + Math.min(len, off + 65536)));
      }
      return ESUCCESS;
    },
    fd_write(fd, iovs, iovsLen, nwritten) {
      if (fd !== 1 && fd !== 2) return EBADF;
      const v = view();
      let n = 0;
      for (let i = 0; i < iovsLen; i++) {
        const ptr = v.getUint32(iovs + i * 8, true);
        const len = v.getUint32(iovs + i * 8 + 4, true);
        emit(fd, decoders[fd].decode(bytes().subarray(ptr, ptr + len), { stream: true }));
        n += len;
      }
      v.setUint32(nwritten, n, true);
      return ESUCCESS;
    },
    fd_fdstat_get(fd, buf) {
      if (fd > 2) return EBADF;
      const v = view();
      for (let i = 0; i < 24; i++) v.setUint8(buf + i, 0);
      v.setUint8(buf, 2); // filetype: character device
      return ESUCCESS;
    },
    fd_fdstat_set_flags(fd) {
      return fd > 2 ? EBADF : ESUCCESS;
    },
    fd_close() {
      return EBADF;
    },
    fd_prestat_get() {
      return EBADF; // no preopened directories
    },
    fd_prestat_dir_name() {
      return EBADF;
    },
    sched_yield() {
      return ESUCCESS;
    },
    poll_oneoff() {
      return ENOSYS;
    },
    proc_exit(code) {
      for (const fd of [1, 2]) if (pending[fd]) sinks[fd](pending[fd]), (pending[fd] = "");
      throw new WasiExit(code);
    },
  };
  const imports = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.module !== "wasi_snapshot_preview1" || imp.kind !== "function") continue;
    imports[imp.name] = wasi[imp.name] ?? (() => ENOSYS);
  }
  return {
    imports: { wasi_snapshot_preview1: imports },
    setInstance(instance) {
      memory = instance.exports.memory;
    },
  };
}

async function readSource(source) {
  if (source instanceof WebAssembly.Module) return source;
  if (source === undefined) source = new URL("./kernels.wasm", import.meta.url);
  if (typeof source === "string" && !/^[a-z][a-z0-9+.-]*:/i.test(source) && isNode) {
    const { readFile } = await nodeImport("node:fs/promises");
    return readFile(source);
  }
  if (typeof source === "string") source = new URL(source, import.meta.url);
  if (source instanceof URL) {
    if (source.protocol === "file:" && isNode) {
      const { readFile } = await nodeImport("node:fs/promises");
      return readFile(source);
    }
    source = fetch(source);
  }
  source = await source;
  if (typeof Response !== "undefined" && source instanceof Response) {
    if (!source.ok) throw new Error(`fetch kernels.wasm: ${source.status} ${source.statusText}`);
    return source.arrayBuffer();
  }
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source;
  throw new TypeError("load: source must be a path, URL, Response, bytes or WebAssembly.Module");
}

/**
 * load instantiates kernels.wasm, runs _initialize and returns one method per kernel.
 * source: where the module comes from (default: kernels.wasm beside this file).
 * options.wasi: "node" (node:wasi, the default in Node) or "builtin" (this file's shim, the
 * default elsewhere).
 */
export async function load(source, options = {}) {
  const got = await readSource(source);
  const module = got instanceof WebAssembly.Module ? got : await WebAssembly.compile(got);
  const mode = options.wasi ?? (isNode ? "node" : "builtin");
  let instance;
  if (mode === "node") {
    const { WASI } = await nodeImport("node:wasi");
    const wasi = new WASI({ version: "preview1", args: [], env: {}, returnOnExit: true });
    instance = await WebAssembly.instantiate(module, wasi.getImportObject());
    wasi.initialize(instance);
  } else if (mode === "builtin") {
    const wasi = builtinWasi(module, options);
    instance = await WebAssembly.instantiate(module, wasi.imports);
    wasi.setInstance(instance);
    instance.exports._initialize();
  } else {
    throw new TypeError(`load: options.wasi must be "node" or "builtin", not ${JSON.stringify(mode)}`);
  }
  return wrap(instance, module, options);
}

function wrap(instance, module, options) {
  // A call that threw (a trap: V8's stack overflow, out of memory, the Go runtime's abort)
  // left the Go runtime inside half-way through: the instance refuses further calls until
  // the caller loads a new one (reload).
  let trapped = null;
  const out = {
    instance,
    kernels,
    get trapped() {
      return trapped;
    },
    reload: () => load(module, options),
  };
  for (const k of kernels) {
    const fn = instance.exports[k.export];
    if (typeof fn !== "function") throw new Error(`kernels.wasm has no export ${k.export}`);
    out[k.name] = (...args) => {
      if (args.length !== k.params.length) {
        throw new TypeError(`${k.name} takes ${k.params.length} arguments (${k.params.map((p) => p.name).join(", ")}), got ${args.length}`);
      }
      k.params.forEach((p, i) => {
        const a = args[i];
        if (typeof a !== "number" || !Number.isInteger(a)) {
          const got = typeof a === "string" ? JSON.stringify(a) : typeof a === "number" ? String(a) : `a ${typeof a}`;
          throw new TypeError(`${k.name}: ${p.name} must be an integer (a number), got ${got}`);
        }
        if (a < p.min || a > p.max) {
          throw new RangeError(`${k.name}: ${p.name} must be in ${p.min}..${p.max}, got ${a}`);
        }
      });
      if (trapped) {
        throw new Error(`${k.name}: this instance of kernels.wasm trapped in an earlier call (${trapped}) and refuses calls: load a new one (await k.reload())`, { cause: trapped });
      }
      try {
        return fn(...args);
      } catch (err) {
        trapped = err;
        throw err;
      }
    };
    // The former name of a loop test's method (loop_test1 for test1), kept for one release.
    for (const alias of k.aliases ?? []) out[alias] = out[k.name];
  }
  out.call = (name, ...args) => {
    const k = kernels.find((k) => k.name === name || k.export === name || (k.aliases ?? []).includes(name));
    if (!k) {
      throw new (typeof name === "string" ? RangeError : TypeError)(
        `no kernel ${JSON.stringify(name)}: the kernels are ${kernels.map((k) => k.name).join(", ")}`,
      );
    }
    return out[k.name](...args);
  };
  return out;
}
