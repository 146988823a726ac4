// The page's selection (kernels, their arguments, engines, runs, warm-up, the sample's
// minimum, history) and its
// round trip through the URL's query string, so that a link reproduces it.

import type { Catalogue, Kernel } from "./types";

export interface Selection {
  kernels: string[];
  /** Raw text of each argument input, by kernel then parameter (validated separately). */
  args: Record<string, Record<string, string>>;
  engines: string[];
  runs: string;
  warmup: string;
  /** How long a sample lasts at least, in ms (0: one call per sample). */
  min_sample_ms: string;
  /** How long a warm-up lasts at least, in ms (0: its warmup calls alone). */
  warmup_ms: string;
  history: boolean;
  /** The engine the × column is taken against (native by default). */
  base: string;
  /** Each cell's time limit, in seconds (the server's by default, at most it). */
  limit_s: string;
}

/** The first Run's kernels and engines: the recursion article's two kernels on native code,
 * a JIT and an interpreter on the server, and this browser's wasm and JavaScript. */
const DEFAULT_KERNELS = ["fib_it", "fib_rec"];
const DEFAULT_ENGINES = ["native", "wazero-compiler", "wazero-interpreter", "browser-wasm", "browser-js"];

/**
 * FIRST_SIZES are the page's own sizes where the articles' would make the first Run slow:
 * fib_rec(40) takes seconds a call on an interpreter, past the time limit with its samples;
 * fib_rec(25) keeps every default cell under a second on two idle cores, its ratios those
 * of the recursion all the same. The articles' sizes (the catalogue's defaults) are one
 * click away (articleArgs).
 */
export const FIRST_SIZES: Record<string, Record<string, number>> = { fib_rec: { n: 25 } };

/**
 * FIRST_WARMUP_MS is the first Run's warm-up minimum, in ms: each server cell runs in
 * several worker processes, each warmed up apart, so the method's 500 ms (wasmgap bench's)
 * would be most of the first Run; 200 ms of fib_rec(25) is hundreds of calls, past the
 * JITs' tiering up. A link's warmup_ms, or the field, sets any other.
 */
export const FIRST_WARMUP_MS = 200;

/** articleArgs is every kernel's arguments at the articles' sizes (the catalogue's defaults). */
export function articleArgs(cat: Catalogue): Selection["args"] {
  const args: Selection["args"] = {};
  for (const k of cat.kernels) args[k.name] = Object.fromEntries(k.params.map((p) => [p.name, String(p.default)]));
  return args;
}

/** firstArgs is every kernel's arguments at the page's first sizes: the articles' where
 * FIRST_SIZES names none, clamped to the catalogue's range. */
export function firstArgs(cat: Catalogue): Selection["args"] {
  const args = articleArgs(cat);
  for (const k of cat.kernels) {
    for (const p of k.params) {
      const v = FIRST_SIZES[k.name]?.[p.name];
      if (v !== undefined) args[k.name]![p.name] = String(Math.min(p.max, Math.max(p.min, v)));
    }
  }
  return args;
}

export function defaults(cat: Catalogue, browserEngines: readonly string[]): Selection {
  const args = firstArgs(cat);
  const all = [...cat.engines, ...browserEngines];
  return {
    kernels: DEFAULT_KERNELS.filter((n) => cat.kernels.some((k) => k.name === n)),
    args,
    engines: DEFAULT_ENGINES.filter((e) => all.includes(e)),
    runs: String(cat.runs.default),
    warmup: String(cat.warmup.default),
    min_sample_ms: String(cat.min_sample_ms.default),
    warmup_ms: String(Math.min(cat.warmup_ms.max, Math.max(cat.warmup_ms.min, FIRST_WARMUP_MS))),
    history: false,
    base: "native",
    limit_s: String(Math.round(cat.timeout_ns / 1e9)),
  };
}

/** fromQuery reads a selection from a query string over the defaults; unknown names are dropped. */
export function fromQuery(query: string, cat: Catalogue, browserEngines: readonly string[]): Selection {
  const sel = defaults(cat, browserEngines);
  const q = new URLSearchParams(query);
  const all = [...cat.engines, ...browserEngines];
  const k = q.get("k");
  if (k !== null) sel.kernels = k.split(",").filter((n) => cat.kernels.some((kk) => kk.name === n));
  const e = q.get("e");
  if (e !== null) sel.engines = e.split(",").filter((n) => all.includes(n));
  sel.runs = q.get("runs") ?? sel.runs;
  sel.warmup = q.get("warmup") ?? sel.warmup;
  sel.min_sample_ms = q.get("min_sample_ms") ?? sel.min_sample_ms;
  sel.warmup_ms = q.get("warmup_ms") ?? sel.warmup_ms;
  sel.history = q.get("history") === "1";
  sel.limit_s = q.get("limit") ?? sel.limit_s;
  const base = q.get("base");
  if (base !== null && all.includes(base)) sel.base = base;
  for (const [key, value] of q) {
    const dot = key.indexOf(".");
    if (dot < 0) continue;
    const kernel = key.slice(0, dot);
    const param = key.slice(dot + 1);
    const args = sel.args[kernel];
    if (args && param in args) args[param] = value;
  }
  return sel;
}

/**
 * unknownNames lists what a query string names that the catalogue does not know (kernels,
 * engines, kernel arguments), each with what is known: fromQuery leaves them out, the page
 * says so.
 */
export function unknownNames(query: string, cat: Catalogue, browserEngines: readonly string[]): string[] {
  const q = new URLSearchParams(query);
  const all = [...cat.engines, ...browserEngines];
  const kernels = cat.kernels.map((k) => k.name);
  const out: string[] = [];
  const list = (names: string[]) => names.map((n) => JSON.stringify(n)).join(", ");
  const badKernels = (q.get("k") ?? "").split(",").filter((n) => n !== "" && !kernels.includes(n));
  if (badKernels.length) out.push(`unknown kernel ${list(badKernels)} (kernels: ${kernels.join(", ")})`);
  const badEngines = (q.get("e") ?? "").split(",").filter((n) => n !== "" && !all.includes(n));
  if (badEngines.length) out.push(`unknown engine ${list(badEngines)} (engines: ${all.join(", ")})`);
  for (const key of q.keys()) {
    const dot = key.indexOf(".");
    if (dot < 0) continue;
    const kernel = cat.kernels.find((k) => k.name === key.slice(0, dot));
    if (!kernel) out.push(`unknown kernel in ${JSON.stringify(key)}`);
    else if (!kernel.params.some((p) => p.name === key.slice(dot + 1)))
      out.push(`${kernel.name} has no argument ${JSON.stringify(key.slice(dot + 1))} (its arguments: ${kernel.params.map((p) => p.name).join(", ")})`);
  }
  return out;
}

/** toQuery writes the selection as a query string: the arguments of the chosen kernels only. */
export function toQuery(sel: Selection): string {
  const q = new URLSearchParams();
  q.set("k", sel.kernels.join(","));
  for (const k of sel.kernels) {
    for (const [p, v] of Object.entries(sel.args[k] ?? {})) q.set(`${k}.${p}`, v);
  }
  q.set("e", sel.engines.join(","));
  q.set("runs", sel.runs);
  q.set("warmup", sel.warmup);
  q.set("min_sample_ms", sel.min_sample_ms);
  q.set("warmup_ms", sel.warmup_ms);
  if (sel.history) q.set("history", "1");
  if (sel.base !== "native") q.set("base", sel.base);
  q.set("limit", sel.limit_s);
  return q.toString().replaceAll("%2C", ",");
}

/** checkInt validates one integer input against its bounds, saying what is allowed. */
export function checkInt(text: string, name: string, min: number, max: number): { value: number; error?: string } {
  const t = text.trim();
  if (!/^-?\d+$/.test(t)) return { value: NaN, error: `${name} must be an integer from ${min} to ${max}` };
  const value = Number(t);
  if (value < min || value > max) return { value, error: `${name} = ${value} is out of range: allowed ${min} to ${max}` };
  return { value };
}

/** kernelArgs parses a kernel's argument inputs: the values, and the first problem if any. */
export function kernelArgs(kernel: Kernel, sel: Selection): { args: number[]; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const args = kernel.params.map((p) => {
    const r = checkInt(sel.args[kernel.name]?.[p.name] ?? String(p.default), p.name, p.min, p.max);
    if (r.error) errors[p.name] = r.error;
    return r.value;
  });
  return { args, errors };
}
