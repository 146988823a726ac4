// A stored run's own page (/runs/N): the run as the playground shows a Run — the same
// table, cells, chart and details, drawn by the same code from GET /api/results/N — with its
// method, its environment and a link that opens its selection in the playground.

import { fetchCatalogue, fetchHistory } from "./api";
import { type CellState, isBrowserEngine } from "./cells";
import { renderChart } from "./chart";
import { showDetails } from "./details";
import { normalize } from "./history";
import { renderLessons } from "./lessons";
import { info, order } from "./engines";
import { duration, label } from "./format";
import { Grid, type Row } from "./results";
import { defaults, toQuery } from "./selection";
import { renderTable } from "./table";
import { BROWSER_ENGINES, type Catalogue, type CellResult, type Kernel, type ServerEnvironment, type ServerResult, type Setup } from "./types";
import { $, el } from "./dom";

/** A cell as the store keeps it (measure.Result's JSON): as POST /api/run streams it, with its
 * warm-up's time and its runtime, and a setup only where one was measured. */
type StoredCell = Omit<ServerResult, "setup"> & { setup?: Setup; warmed_up_ns?: number; runtime?: string };

/** A stored run (results.Run's JSON). */
interface StoredRun {
  id: number;
  created: string;
  source: string;
  wasmgap: string;
  /** The machine's name, for a run a farm's agent stored. */
  machine_name?: string;
  browser?: { name?: string; version?: string; user_agent?: string; hardware_concurrency?: number; cross_origin_isolated?: boolean; timer_resolution_ns?: number };
  report: {
    method: { runs: number; warmup: number; warmup_time_ns?: number; timeout_ns: number; min_sample_ns?: number; timing: string; partial?: string };
    environment: ServerEnvironment & { runtimes?: { engine: string; version: string }[] };
    results: StoredCell[];
  };
}

const WHO: Record<string, string> = { cli: "wasmgap bench", server: "the playground's server", browser: "a browser, from the playground" };

/** showStoredRun draws the stored run the page's body names (data-run). */
export async function showStoredRun(): Promise<void> {
  const id = document.body.dataset.run ?? "";
  const status = $("status");
  let cat: Catalogue;
  let run: StoredRun;
  try {
    cat = await fetchCatalogue();
    const resp = await fetch(`/api/results/${encodeURIComponent(id)}`);
    const body = (await resp.json()) as StoredRun & { error?: string };
    if (!resp.ok) throw new Error(body.error ?? resp.statusText);
    run = body;
  } catch (err) {
    status.textContent = `Cannot show run ${id}: ${err instanceof Error ? err.message : String(err)}`;
    return;
  }
  const grid = gridOf(run, cat);
  const engines = grid.engines;
  $("run-title").textContent = `Run ${run.id}: ${grid.rows.map((r) => r.label).join(", ")} on ${engines.length} engine${engines.length === 1 ? "" : "s"}`;
  document.title = `${$("run-title").textContent} · wasmgap`;
  const browser = run.browser?.name ? ` (${[run.browser.name, run.browser.version].filter(Boolean).join(" ")})` : "";
  $("run-when").textContent = `Measured ${run.created.slice(0, 16).replace("T", " ")} UTC by ${WHO[run.source] ?? run.source}${browser}.`;
  $<HTMLAnchorElement>("open-playground").href = `/?${playgroundQuery(run, grid, cat)}`;
  const title = (e: string): string => {
    const by = run.report.results.find((r) => r.engine === e && r.runtime)?.runtime;
    return isBrowserEngine(e) && by ? `${info(e).title} (${by})` : info(e).title;
  };
  renderTable($("table"), grid, { details: (r, e) => showDetails($<HTMLDialogElement>("details"), grid, r, e), title }, undefined);
  // The articles' claims beside the lessons: without them, the lessons alone.
  renderLessons($("lessons"), grid, undefined);
  void fetchHistory().then((h) => renderLessons($("lessons"), grid, normalize(h)), () => {});
  renderChart($("chart"), grid, undefined);
  // Drawn at its host's width: again when the window changes it.
  let resize: number | undefined;
  window.addEventListener("resize", () => {
    clearTimeout(resize);
    resize = window.setTimeout(() => renderChart($("chart"), grid, undefined), 150);
  });
  status.replaceChildren(...marks(run, grid));
  fill($("run-method"), methodOf(run));
  fill($("run-env"), envOf(run));
  document.body.dataset.ready = "1";
}

/** gridOf lays the run's cells out as the page's grid: its kernels as rows, its engines in
 * the page's order, each cell as the page holds a finished one. */
function gridOf(run: StoredRun, cat: Catalogue): Grid {
  const rows: Row[] = [];
  const rowOf = new Map<string, number>();
  for (const c of run.report.results) {
    const key = label(c.kernel, c.args);
    if (rowOf.has(key)) continue;
    rowOf.set(key, rows.length);
    rows.push(Grid.row(kernelOf(cat, c.kernel), c.args));
  }
  const grid = new Grid(rows, order([...new Set(run.report.results.map((c) => c.engine))]), "idle");
  grid.requestedRuns = run.report.method.runs;
  for (const c of run.report.results) grid.set(rowOf.get(label(c.kernel, c.args))!, c.engine, cellOf(run, c));
  return grid;
}

/** kernelOf is the catalogue's kernel, or one described by its name (a kernel this server
 * no longer has). */
function kernelOf(cat: Catalogue, name: string): Kernel {
  return cat.kernels.find((k) => k.name === name) ?? { name, export: name, func: name, group: "", article: "", summary: "", params: [] };
}

function cellOf(run: StoredRun, c: StoredCell): CellState {
  const m = run.report.method;
  const browser = isBrowserEngine(c.engine);
  const b = run.browser;
  const result: CellResult = {
    kernel: c.kernel,
    args: c.args,
    engine: c.engine,
    where: browser ? "browser" : "server",
    runs: c.runs,
    warmup: c.warmup,
    warmed_up_ns: c.warmed_up_ns,
    calls: c.calls || 1,
    min_sample_ns: m.min_sample_ns !== undefined && m.min_sample_ns < 0 ? 0 : m.min_sample_ns,
    value: String(c.value),
    expected: String(c.expected),
    samples_ns: c.samples_ns ?? [],
    min_ns: c.min_ns,
    median_ns: c.median_ns,
    max_ns: c.max_ns,
    ci: c.ci?.level ? c.ci : undefined,
    executions: c.executions,
    first_ns: c.first_ns,
    noise: c.noise,
    setup: c.setup ?? { compile_ns: 0, instantiate_ns: 0 },
    failure: c.failure,
    run: run.id,
  };
  if (browser && b?.user_agent) {
    result.browser = { user_agent: b.user_agent, cores: b.hardware_concurrency ?? 0, cross_origin_isolated: b.cross_origin_isolated ?? false, timer_resolution_ns: b.timer_resolution_ns ?? 0 };
  } else if (!browser) {
    result.server = run.report.environment;
  }
  if (browser && c.runtime) result.note = `measured by ${c.runtime}, in its page`;
  return { kind: "done", result };
}

/** marks says what the page said of the Run's cells: a busy machine, cells short of their
 * runs, a run stopped before its end. */
function marks(run: StoredRun, grid: Grid): string[] {
  const cells = run.report.results;
  const out: string[] = [];
  const busy = cells.filter((c) => c.noise?.busy).length;
  if (busy) out.push(`${busy} of ${cells.length} cells measured on a busy machine (marked “busy”): their times may be slower and more spread than on a quiet one`);
  const short = cells.filter((c) => !c.failure && c.runs < grid.requestedRuns).length;
  if (short) out.push(`${short} cell${short === 1 ? "" : "s"} fit fewer than the ${grid.requestedRuns} runs asked for in the time limit`);
  const failed = cells.filter((c) => c.failure).length;
  if (failed) out.push(`${failed} cell${failed === 1 ? "" : "s"} failed`);
  if (run.report.method.partial) out.push(`incomplete: ${run.report.method.partial}`);
  return out.length ? [`${out.join("; ")}.`] : [];
}

/** playgroundQuery is the playground's query for the run's selection: its kernels with
 * their arguments, its engines and every setting of its method. */
function playgroundQuery(run: StoredRun, grid: Grid, cat: Catalogue): string {
  const sel = defaults(cat, BROWSER_ENGINES);
  sel.kernels = [...new Set(grid.rows.map((r) => r.kernel.name))].filter((k) => cat.kernels.some((kk) => kk.name === k));
  for (const r of grid.rows) {
    r.kernel.params.forEach((p, i) => {
      if (i < r.args.length) (sel.args[r.kernel.name] ??= {})[p.name] = String(r.args[i]);
    });
  }
  sel.engines = grid.engines;
  const m = run.report.method;
  sel.runs = String(m.runs);
  sel.warmup = String(m.warmup);
  const ms = (ns: number | undefined, fallback: string): string => (ns === undefined || ns === 0 ? fallback : String(Math.max(0, Math.round(ns / 1e6))));
  sel.min_sample_ms = ms(m.min_sample_ns, sel.min_sample_ms);
  sel.warmup_ms = ms(m.warmup_time_ns, sel.warmup_ms);
  if (m.timeout_ns > 0) sel.limit_s = String(Math.min(Number(sel.limit_s), Math.max(1, Math.round(m.timeout_ns / 1e9))));
  return toQuery(sel);
}

function methodOf(run: StoredRun): [string, string][] {
  const m = run.report.method;
  const out: [string, string][] = [["timed samples per cell", String(m.runs)], ["warm-up calls", String(m.warmup)]];
  if (m.warmup_time_ns) out.push(["warm-up lasts at least", duration(m.warmup_time_ns)]);
  if (m.min_sample_ns && m.min_sample_ns > 0) out.push(["a sample lasts at least", duration(m.min_sample_ns)]);
  else if (m.min_sample_ns && m.min_sample_ns < 0) out.push(["a sample", "one call"]);
  if (m.timeout_ns > 0) out.push(["time limit per cell", duration(m.timeout_ns)]);
  if (m.timing) out.push(["timing", m.timing]);
  if (m.partial) out.push(["incomplete", m.partial]);
  return out;
}

function envOf(run: StoredRun): [string, string][] {
  const e = run.report.environment;
  const out: [string, string][] = [["machine", run.machine_name ?? ""], ["CPU", e.cpu], ["cores", String(e.cores)], ["OS", `${e.os}/${e.arch ?? ""}`], ["Go", e.go ?? ""], ["wasmgap", run.wasmgap]];
  if (e.gomaxprocs > 0) out.push(["GOMAXPROCS", String(e.gomaxprocs)]);
  for (const k of Object.keys(e.modules ?? {}).sort()) out.push([k, e.modules![k]!]);
  for (const rt of e.runtimes ?? []) out.push([info(rt.engine).title, rt.version]);
  if (run.browser?.user_agent) out.push(["browser", run.browser.user_agent]);
  return out.filter(([, v]) => v !== "" && v !== "/");
}

function fill(dl: HTMLElement, pairs: [string, string][]): void {
  dl.replaceChildren();
  for (const [k, v] of pairs) {
    const dt = el("dt", undefined, k);
    const dd = el("dd", undefined, v);
    dl.append(dt, dd);
  }
}
