// TypeScript declarations of @wasmgap/kernels (index.mjs). The kernel methods are
// generated from wasmgap's Go catalogue when the package is written.

/** One integer parameter of a kernel, with its default and its allowed range. */
export interface Param {
  name: string;
  doc: string;
  default: number;
  min: number;
  max: number;
}

/** One kernel of the catalogue. */
export interface Kernel {
  /** The name the articles, wasmgap's CLI and tables use, and the method of Kernels that runs it: "fib_rec", "test1". */
  name: string;
  /** The export of kernels.wasm that runs it: the same name. */
  export: string;
  /** The former names of the method and export ("loop_test1"), kept for one release. */
  aliases?: string[];
  group: string;
  summary: string;
  params: Param[];
}

/** Every kernel of kernels.wasm, in catalogue order. */
export declare const kernels: readonly Kernel[];

/** What the builtin WASI shim throws when the module calls proc_exit. */
export declare class WasiExit extends Error {
  code: number;
}

export interface LoadOptions {
  /** "node" (node:wasi, the default in Node) or "builtin" (the package's own shim, the default elsewhere). */
  wasi?: "node" | "builtin";
  /** Lines the module writes to stdout (builtin shim only; default console.log). */
  stdout?: (line: string) => void;
  /** Lines the module writes to stderr, e.g. why the Go runtime aborted (builtin shim only; default console.error). */
  stderr?: (line: string) => void;
}

/** Where kernels.wasm comes from: a path (Node), a URL, a fetch Response, its bytes, or a compiled module. */
export type Source =
  | string
  | URL
  | Response
  | Promise<Response>
  | ArrayBuffer
  | ArrayBufferView
  | WebAssembly.Module;

/**
 * One method per kernel (arguments are i32 numbers, the result an i64 as a bigint), plus the
 * instance. A method throws a TypeError for an argument that is not an integer number or a
 * wrong number of arguments, a RangeError for an integer outside the kernel's range. A call
 * that throws from inside the module (a trap: stack overflow, out of memory) leaves the
 * instance refusing further calls with an Error: load a new one with reload().
 */
export interface Kernels {
  instance: WebAssembly.Instance;
  kernels: readonly Kernel[];
  /** The error of the call that trapped, after which this instance refuses calls; null before. */
  readonly trapped: unknown;
  /** Loads a new instance from the same compiled module and options. */
  reload(): Promise<Kernels>;
  /** Calls a kernel by its name (or a former name); an unknown name is a RangeError. */
  call(name: string, ...args: number[]): bigint;
  /* @kernels */
}

/**
 * Instantiates kernels.wasm, runs _initialize once and returns its kernels. One call at a
 * time per instance; after a trap the instance refuses calls: load a new one (reload()).
 */
export declare function load(source?: Source, options?: LoadOptions): Promise<Kernels>;

/** The builtin WASI preview1 import object for module (what load uses outside Node). */
export declare function builtinWasi(
  module: WebAssembly.Module,
  options?: Pick<LoadOptions, "stdout" | "stderr">,
): { imports: WebAssembly.Imports; setInstance(instance: WebAssembly.Instance): void };
