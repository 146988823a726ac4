// The "Your kernel" tab: a Go editor whose source the server checks and builds to wasm
// (POST /api/custom), then runs like the articles' kernels on the sandboxed tiers (wazero's
// compiler and interpreter, yaegi on the server; this browser's wasm engine in a worker),
// filling the same table, chart and Markdown. The tiers must agree: there is no
// independent expected value, so a cell whose value differs from the row's first is marked
// as a mismatch.

import { BUDGET_SHARE, type Bundle, type CellJob, type CellRun, type CellState, cellWorker, runCell } from "./cells";
import { EXAMPLES, type Example, TEMPLATE } from "./custom-examples";
import type { Editor, SourceError } from "./editor";
import { label } from "./format";
import type { WorkerRequest } from "./protocol";
import type { Row } from "./results";
import { checkInt } from "./selection";
import type { Catalogue, Kernel, Param } from "./types";
import { $, el } from "./dom";

/** The answer of POST /api/custom. */
export interface Built {
  id: string;
  func: { name: string; params: string[]; types: string[] };
  params: Param[];
  engines: string[];
  cached: boolean;
  build_ns: number;
}

/** A refused build: the message, and each fault's place. */
interface BuildRefusal {
  error: string;
  errors?: { line?: number; column?: number; error: string }[];
}

/** What the page's main module asks of the tab. */
export interface CustomPanel {
  /** active reports whether the tab is shown. */
  active(): boolean;
  /** rows are the table's rows while the tab is shown: the built function with its arguments. */
  rows(): Row[];
  /** engines keeps the selected engines that run user kernels. */
  engines(selected: string[]): string[];
  /** buildAndRun builds the source if it changed, then runs every cell. */
  buildAndRun(): Promise<void>;
  /** runCell runs one cell of the tab's row, marking a value that differs from the row's first. */
  runCell(job: CellJob, timeoutMs: number, update: (s: CellState) => void): CellRun;
  /** fragment is the URL fragment that restores the tab ("" when it is not shown). */
  fragment(): string;
}

/** The hooks of the main module the tab calls. */
export interface Hooks {
  /** changed redraws the empty table and updates the URL. */
  changed(): void;
  /** run runs every cell of the table. */
  run(): Promise<void>;
}

const BROWSER_WASM = "browser-wasm";


// ---- the source in the URL: deflate-raw, then base64url --------------------------------

async function pack(state: { src: string; args: Record<string, string> }): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(state));
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  const packed = new Uint8Array(await new Response(stream).arrayBuffer());
  let bin = "";
  for (const b of packed) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

async function unpack(text: string): Promise<{ src: string; args: Record<string, string> } | undefined> {
  try {
    const bin = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
    const parsed = JSON.parse(await new Response(stream).text()) as { src?: unknown; args?: unknown };
    if (typeof parsed.src !== "string") return undefined;
    const args: Record<string, string> = {};
    if (parsed.args && typeof parsed.args === "object") {
      for (const [k, v] of Object.entries(parsed.args as Record<string, unknown>)) args[k] = String(v);
    }
    return { src: parsed.src, args };
  } catch {
    return undefined;
  }
}

// ---- the tab ---------------------------------------------------------------------------

/** mountCustom wires the tab into the page; it returns undefined when the server has user
 * kernels off. */
export function mountCustom(cat: Catalogue, bundle: Bundle, hooks: Hooks): CustomPanel | undefined {
  const tabs = $("tabs");
  if (cat.panels.custom !== true) {
    tabs.hidden = true;
    return undefined;
  }
  tabs.hidden = false;
  let active = false;
  let editor: Editor | undefined;
  let source = TEMPLATE.source;
  let args: Record<string, string> = { ...TEMPLATE.args };
  let built: Built | undefined;
  let builtSource = "";
  let packed = "";
  /** The first value of each row of the current run, and the tier that gave it. */
  let reference: { value: string; engine: string } | undefined;

  const status = $("custom-status");
  const argsHost = $("custom-args");
  const select = $<HTMLSelectElement>("custom-example");
  for (const [i, ex] of EXAMPLES.entries()) {
    const opt = el("option", undefined, ex.title);
    opt.value = String(i);
    select.append(opt);
  }

  const say = (text: string, kind: "" | "error" | "ok" = ""): void => {
    status.textContent = text;
    status.className = `custom-status ${kind}`;
  };

  const share = async (): Promise<void> => {
    packed = await pack({ src: source, args });
    hooks.changed();
  };

  /** The parameters of the built function, or those the source seems to declare. */
  const params = (): string[] => built?.func.params ?? guessParams(source);

  const renderArgs = (): void => {
    argsHost.replaceChildren();
    for (const p of params()) {
      const lab = el("label", "param");
      const input = document.createElement("input");
      input.type = "number";
      input.inputMode = "numeric";
      input.step = "1";
      input.name = `custom.${p}`;
      input.value = args[p] ?? "0";
      input.oninput = () => {
        args[p] = input.value;
        void share();
      };
      lab.append(document.createTextNode(`${p} `), input);
      argsHost.append(lab);
    }
  };

  const edited = (): void => {
    source = editor?.text() ?? source;
    if (source !== builtSource) {
      built = undefined;
      renderArgsIfChanged();
    }
    void share();
  };
  let lastParams = "";
  const renderArgsIfChanged = (): void => {
    const now = params().join(",");
    if (now !== lastParams) {
      lastParams = now;
      renderArgs();
    }
  };

  const load = (ex: { source: string; args: Record<string, string> }): void => {
    source = ex.source;
    args = { ...ex.args };
    built = undefined;
    editor?.setText(source);
    editor?.mark([]);
    lastParams = "";
    renderArgsIfChanged();
    say("");
    void share();
  };
  select.onchange = () => {
    const ex: Example | undefined = EXAMPLES[Number(select.value)];
    if (ex) load(ex);
  };

  const openEditor = async (): Promise<void> => {
    if (editor) return;
    const file = bundle.files["editor.js"];
    if (!file) {
      say("This build has no editor: build the page with `go tool task build`.", "error");
      return;
    }
    const mod = (await import(`/${file}`)) as typeof import("./editor");
    editor = mod.createEditor($("editor"), source, edited);
    document.body.dataset.editor = "ready";
  };

  const show = (on: boolean): void => {
    active = on;
    document.body.dataset.tab = on ? "custom" : "articles";
    $("custom").hidden = !on;
    $("tab-articles").setAttribute("aria-selected", String(!on));
    $("tab-custom").setAttribute("aria-selected", String(on));
    if (on) void openEditor();
    hooks.changed();
  };
  $("tab-articles").onclick = () => show(false);
  $("tab-custom").onclick = () => show(true);

  /** build checks and builds the source; it marks the editor and says what happened. */
  const build = async (): Promise<boolean> => {
    source = editor?.text() ?? source;
    if (built && builtSource === source) return true;
    say("Checking and building…");
    editor?.mark([]);
    let resp: Response;
    try {
      resp = await fetch("/api/custom", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ source }),
      });
    } catch (err) {
      say(`The server cannot be reached: ${err instanceof Error ? err.message : String(err)}`, "error");
      return false;
    }
    if (!resp.ok) {
      let body: BuildRefusal;
      try {
        body = (await resp.json()) as BuildRefusal;
      } catch {
        body = { error: `${resp.status} ${resp.statusText}` };
      }
      const marks: SourceError[] = (body.errors ?? [])
        .filter((e) => (e.line ?? 0) > 0)
        .map((e) => ({ line: e.line ?? 1, column: e.column ?? 1, message: e.error }));
      editor?.mark(marks);
      say(body.error, "error");
      document.body.dataset.built = "error";
      return false;
    }
    built = (await resp.json()) as Built;
    builtSource = source;
    lastParams = "";
    renderArgsIfChanged();
    const sig = built.func.params.map((p, i) => `${p} ${built?.func.types[i] ?? ""}`).join(", ");
    say(
      `${built.func.name}(${sig}) int64 — ${built.cached ? "built before, from the cache" : `built in ${(built.build_ns / 1e9).toFixed(2)} s`}. ` +
        `It runs on ${[...built.engines, BROWSER_WASM].join(", ")}.`,
      "ok",
    );
    document.body.dataset.built = built.id;
    return true;
  };
  $("custom-build").onclick = () => void build();
  // Format: the source as gofmt prints it, from the server (go/format).
  $("custom-format").onclick = async () => {
    const text = editor?.text() ?? source;
    try {
      const resp = await fetch("/api/custom/format", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ source: text }) });
      const body = (await resp.json()) as { source?: string; error?: string };
      if (!resp.ok || body.source === undefined) {
        say(body.error ?? `${resp.status} ${resp.statusText}`, "error");
        return;
      }
      if (body.source !== text) editor?.setText(body.source);
      say("Formatted as gofmt does.", "ok");
    } catch (err) {
      say(`The server cannot be reached: ${err instanceof Error ? err.message : String(err)}`, "error");
    }
  };

  // Restore a shared source from the URL.
  const restore = async (): Promise<void> => {
    const m = /(?:^#|&)custom=([^&]+)/.exec(location.hash);
    if (!m?.[1]) return;
    const state = await unpack(m[1]);
    if (!state) {
      say("The link's source could not be read: here is the template.", "error");
      show(true);
      return;
    }
    load({ source: state.src, args: state.args });
    show(true);
  };
  renderArgsIfChanged();
  void restore();

  const kernelOf = (b: Built): Kernel => ({
    name: b.id,
    export: "run",
    func: b.func.name,
    group: "custom",
    article: "the “Your kernel” tab",
    summary: "your kernel",
    params: b.params,
  });

  return {
    active: () => active,
    rows: () => {
      reference = undefined;
      if (!built) {
        const names = params();
        const values = names.map((p) => Number(args[p] ?? "0"));
        const k: Kernel = { name: "custom", export: "run", func: "", group: "custom", article: "", summary: "your kernel: not built yet", params: [] };
        return [{ kernel: k, args: values, label: label(funcName(source) ?? "kernel", values) }];
      }
      const values: number[] = [];
      let invalid: string | undefined;
      for (const p of built.params) {
        const r = checkInt(args[p.name] ?? "0", p.name, p.min, p.max);
        invalid ??= r.error;
        values.push(r.value);
      }
      return [{ kernel: kernelOf(built), args: values, label: label(built.func.name, values), invalid }];
    },
    engines: (selected) =>
      selected.filter((e) => e === BROWSER_WASM || (built?.engines ?? (cat.custom_engines ?? []).filter((s) => cat.engines.includes(s))).includes(e)),
    buildAndRun: async () => {
      if (await build()) {
        reference = undefined;
        await hooks.run();
      }
    },
    runCell: (job, timeoutMs, update) => {
      const run =
        job.engine === BROWSER_WASM ? runInWorker(job, bundle, timeoutMs, update) : runCell(job, bundle, timeoutMs, update);
      const done = run.done.then((s): CellState => {
        if (s.kind !== "done" || s.result.failure || s.result.value === "") return s;
        if (!reference) {
          reference = { value: s.result.value, engine: job.engine };
          return s;
        }
        if (s.result.value !== reference.value) {
          return {
            kind: "done",
            result: { ...s.result, expected: reference.value, failure: `mismatch: got ${s.result.value}, ${reference.engine} got ${reference.value}` },
          };
        }
        return { kind: "done", result: { ...s.result, expected: reference.value } };
      });
      return { done, cancel: run.cancel };
    },
    fragment: () => (active && packed ? `#custom=${packed}` : ""),
  };
}

/** funcName finds the exported function a source declares, for the row before a build. */
function funcName(src: string): string | undefined {
  return /^func\s+([A-Z]\w*)\s*\(/m.exec(src)?.[1];
}

/** guessParams reads the parameter names of the exported function, before a build. */
function guessParams(src: string): string[] {
  const m = /^func\s+[A-Z]\w*\s*\(([^)]*)\)/m.exec(src);
  if (!m?.[1]) return [];
  const names: string[] = [];
  for (const part of m[1].split(",")) {
    const name = part.trim().split(/\s+/)[0];
    if (name && /^[A-Za-z_]\w*$/.test(name)) names.push(name);
  }
  return names;
}

/** runInWorker runs a user kernel's module in this browser, in its own Web Worker that a
 * cancel or the time limit terminates. */
function runInWorker(job: CellJob, bundle: Bundle, timeoutMs: number, update: (s: CellState) => void): CellRun {
  const { done, finish, start } = cellWorker(update);
  const base = {
    kernel: job.kernel.func, args: job.args, engine: job.engine, where: "browser" as const, runs: job.runs, warmup: job.warmup, calls: 1,
    value: "", expected: "", samples_ns: [], min_ns: 0, median_ns: 0, max_ns: 0, setup: { compile_ns: 0, instantiate_ns: 0 },
  };
  const script = bundle.files["worker-custom.js"];
  if (!script) {
    finish({ kind: "error", message: "this build has no worker for user kernels: build the page with `go tool task build`" });
    return { done, cancel: () => undefined };
  }
  const req: WorkerRequest = {
    kernel: job.kernel.func,
    export: job.kernel.export,
    args: job.args,
    runs: job.runs,
    warmup: job.warmup,
    expected: "",
    // The catalogue kernels' method: k grown to the sample's minimum, the samples within
    // the cell's time limit.
    min_sample_ms: job.minSampleMs,
    warmup_ms: job.warmupMs,
    budget_ms: timeoutMs * BUDGET_SHARE,
    wasmUrl: `/api/custom/${job.kernel.name}/kernel.wasm`,
  };
  const timedOut = { ...base, failure: `timed out after ${Math.round(timeoutMs / 1000)}s` };
  start(script, "browser-wasm (your kernel)", "browser-wasm", req, timeoutMs, timedOut, (r) => ({ ...r, kernel: job.kernel.func }));
  return { done, cancel: () => finish({ kind: "cancelled" }) };
}
