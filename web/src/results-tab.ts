// The stored results: a Run's browser cells, stored in the Run's own stored run beside its
// server cells (named by the browser that measured them), and the Results tab,
// which shows for one kernel and its arguments each engine's medians across every stored
// run (a strip of points with its box, on the chart's log scale), filtered by browser, OS,
// cores, engine version and wasmgap version; each run links to its JSON, any two open in
// a comparison as `wasmgap results compare` prints it, two or more side by side by
// machine as `wasmgap results machines` prints them (a farm's runs: docs/FARM.md), and one
// engine's trend over wasmgap's versions.

import { info } from "./engines";
import { duration } from "./format";
import type { Grid } from "./results";
import type { Catalogue, CellResult } from "./types";
import { $, button, el, svg, SVG } from "./dom";

/** One run's median (results.Point). */
interface Point {
  run: number;
  median_ns: number;
  created: string;
  source: string;
  browser?: string;
  wasmgap: string;
}

interface TrendPoint {
  wasmgap: string;
  first: string;
  runs: number;
  median_ns: number;
}

interface EngineDistribution {
  engine: string;
  runs: number;
  quantiles_ns: [number, number, number, number, number];
  points: Point[];
  /** The trend, for the engine asked for (the first when none was). */
  trend: TrendPoint[] | null;
}

/** GET /api/results (results.Distribution). */
interface Distribution {
  kernel: string;
  args: string;
  engines: EngineDistribution[] | null;
  facets: { browsers: string[] | null; os: string[] | null; cores: number[] | null; engine_versions: string[] | null; wasmgap: string[] | null };
}

interface Side {
  median_ns: number;
  samples: number;
  failure?: string;
}

/** One side of a comparison: a stored run, its cells without their samples. */
interface ComparedRun {
  id: number;
  created: string;
  source: string;
  report?: { results?: { engine: string; noise?: { busy?: boolean } }[] };
}

/** GET /api/results/compare (report.Comparison inside). */
interface Compared {
  old: ComparedRun;
  new: ComparedRun;
  comparison: { changes: { label: string; engine: string; old: Side; new: Side; delta: number; p: number; significant: boolean; note?: string }[]; alpha: number };
}

/** GET /api/results/machines: the table `wasmgap results machines` prints, as text. */
interface Machines {
  runs: { id: number; machine: string; cpu: string; cores: number; created: string }[];
  header: string[];
  rows: string[][];
}

/** What the page tells the Results tab after each run. */
export interface ResultsTab {
  /** ran stores the finished Run's browser cells in its stored run (the batch's), turns
   * the tab to the Run's first kernel, and says what was stored. */
  ran(grid: Grid, method: { runs: number; warmup: number; minSampleMs: number }, batch: string): Promise<Stored>;
}

/** What a Run's browser cells became: the run that holds them, or why none does. */
export interface Stored {
  run?: number;
  cells: number;
  error?: string;
}

/** The filters of the tab, as the query parameters of GET /api/results. */
const FILTERS: { key: string; label: string; facet: keyof Distribution["facets"] }[] = [
  { key: "browser", label: "browser", facet: "browsers" },
  { key: "os", label: "OS", facet: "os" },
  { key: "cores", label: "cores", facet: "cores" },
  { key: "engine_version", label: "engine version", facet: "engine_versions" },
  { key: "wasmgap", label: "wasmgap", facet: "wasmgap" },
];

/** mountResults wires the Results tab, when the server keeps a store. */
export function mountResults(cat: Catalogue): ResultsTab | undefined {
  if (!cat.panels["results"]) return undefined;
  const tabs = $("tabs");
  tabs.hidden = false;
  const tab = $("tab-results");
  tab.hidden = false;
  const section = $("stored");
  section.style.gridColumn = "1 / -1"; // the whole width of the page's grid, as the panes it replaces
  const others = ["controls", "form", "results", "custom"].map((id) => document.getElementById(id)).filter((e): e is HTMLElement => e !== null);
  let hiddenBefore = new Map<HTMLElement, boolean>();
  const show = (on: boolean): void => {
    if (on === !section.hidden) return;
    section.hidden = !on;
    tab.setAttribute("aria-selected", String(on));
    if (on) {
      hiddenBefore = new Map(others.map((e) => [e, e.hidden]));
      for (const e of others) e.hidden = true;
      for (const b of tabs.querySelectorAll<HTMLElement>("button[role=tab]")) if (b !== tab) b.setAttribute("aria-selected", "false");
      document.body.dataset.tab = "results";
      void refresh();
    } else {
      for (const e of others) e.hidden = hiddenBefore.get(e) ?? false;
    }
  };
  tab.onclick = () => show(true);
  const leave = (): void => {
    if (location.hash.startsWith("#results")) history.replaceState(null, "", location.pathname + location.search);
  };
  for (const b of tabs.querySelectorAll<HTMLElement>("button[role=tab]")) {
    if (b !== tab)
      b.addEventListener("click", () => {
        show(false);
        leave();
      });
  }
  // The nav was hidden without user kernels: their tab stays hidden.
  if (!cat.panels["custom"]) $("tab-custom").hidden = true;

  // The controls: a kernel, its arguments, the filters.
  const kernelSel = el("select");
  kernelSel.id = "stored-kernel";
  for (const k of cat.kernels) kernelSel.append(new Option(k.name, k.name));
  const argsIn = el("input");
  argsIn.id = "stored-args";
  argsIn.size = 12;
  const defaults = (): string => (cat.kernels.find((k) => k.name === kernelSel.value)?.params ?? []).map((p) => p.default).join(",");
  argsIn.value = defaults();
  kernelSel.onchange = () => {
    argsIn.value = defaults();
    void refresh();
  };
  argsIn.onchange = () => void refresh();
  const filterSels = new Map<string, HTMLSelectElement>();
  const controls = el("div", "toolbar stored-controls");
  const labelled = (text: string, input: HTMLElement): HTMLLabelElement => {
    const l = el("label");
    l.append(`${text} `, input);
    return l;
  };
  controls.append(labelled("kernel", kernelSel), labelled("arguments", argsIn));
  for (const f of FILTERS) {
    const s = el("select");
    s.id = `stored-${f.key}`;
    s.append(new Option("any", ""));
    s.onchange = () => void refresh();
    filterSels.set(f.key, s);
    controls.append(labelled(f.label, s));
  }
  const status = el("p", "muted small");
  status.id = "stored-status";
  const plot = el("div", "chart-wrap");
  plot.id = "stored-plot";
  const runsHost = el("div");
  runsHost.id = "stored-runs";
  const compareBtn = button("stored-compare-button", "Compare the two checked runs");
  compareBtn.disabled = true;
  const compareOut = el("div", "compare-out");
  compareOut.id = "stored-compare";
  const machinesBtn = button("stored-machines-button", "The checked runs' machines side by side");
  machinesBtn.disabled = true;
  const machinesOut = el("div", "compare-out");
  machinesOut.id = "stored-machines";
  const trendSel = el("select");
  trendSel.id = "stored-trend-engine";
  const trendOut = el("div");
  trendOut.id = "stored-trend";
  const trendBar = el("div", "toolbar");
  trendBar.append(el("h3", undefined, "Trend over wasmgap's versions"), labelled("engine", trendSel));
  section.replaceChildren(
    el("h2", undefined, "Stored results"),
    el("p", "muted small", "Every Run of the page's server cells and every set of browser cells a visitor shared, with wasmgap bench's runs when the server shares their store: each point is one run's median; the box spans the quartiles, its line the median of medians."),
    controls,
    status,
    plot,
    runsHost,
    compareBtn,
    compareOut,
    machinesBtn,
    machinesOut,
    trendBar,
    trendOut,
  );

  let current: Distribution | undefined;
  const checked = new Set<number>();
  compareBtn.onclick = () => void compare([...checked]);
  machinesBtn.onclick = () => void machines([...checked]);
  trendSel.onchange = () => void refresh(); // the trend is the server's for one engine

  let asked = 0; // the latest request: an older answer that arrives late is dropped
  const refresh = async (): Promise<void> => {
    const mine = ++asked;
    const q = new URLSearchParams({ kernel: kernelSel.value, args: argsIn.value.replace(/\s+/g, "") });
    for (const [key, s] of filterSels) if (s.value) q.set(key, s.value);
    if (trendSel.value) q.set("trend", trendSel.value);
    status.textContent = "Loading…";
    // The tab's state is in the URL: a reload or a link opens it as it is.
    history.replaceState(null, "", `${location.pathname}${location.search}#results?${q}`);
    let d: Distribution;
    try {
      const resp = await fetch(`/api/results?${q}`);
      const body = (await resp.json()) as Distribution & { error?: string };
      if (!resp.ok) throw new Error(body.error ?? resp.statusText);
      d = body;
    } catch (err) {
      if (mine !== asked) return;
      status.textContent = `Cannot load the stored results: ${err instanceof Error ? err.message : String(err)}`;
      return;
    }
    if (mine !== asked) return;
    current = d;
    for (const f of FILTERS) {
      const s = filterSels.get(f.key)!;
      const keep = s.value;
      s.replaceChildren(new Option("any", ""), ...(d.facets[f.facet] ?? []).map((v) => new Option(String(v), String(v))));
      s.value = keep;
    }
    const engines = d.engines ?? [];
    const runs = new Set(engines.flatMap((e) => e.points.map((p) => p.run))).size;
    status.textContent = engines.length
      ? `${kernelSel.value}(${d.args.replaceAll(",", ", ")}): ${runs} stored run${runs === 1 ? "" : "s"} (the newest ${engines[0]!.points.length < engines[0]!.runs ? "points drawn" : "all drawn"}).`
      : `No stored run of ${kernelSel.value}(${d.args.replaceAll(",", ", ")}) matches.`;
    renderPlot(plot, engines);
    renderRuns(engines);
    const keepEngine = trendSel.value;
    trendSel.replaceChildren(...engines.map((e) => new Option(info(e.engine).title, e.engine)));
    if (engines.some((e) => e.engine === keepEngine)) trendSel.value = keepEngine;
    renderTrend();
    section.dataset.loaded = String(Number(section.dataset.loaded ?? "0") + 1);
  };

  const renderRuns = (engines: EngineDistribution[]): void => {
    const byRun = new Map<number, { p: Point; cells: string[] }>();
    for (const e of engines) {
      for (const p of e.points) {
        const r = byRun.get(p.run) ?? { p, cells: [] };
        r.cells.push(`${info(e.engine).title} ${duration(p.median_ns)}`);
        byRun.set(p.run, r);
      }
    }
    const list = [...byRun.values()].sort((a, b) => b.p.run - a.p.run).slice(0, 50);
    const table = el("table", "results");
    table.id = "stored-runs-table";
    const hr = table.createTHead().insertRow();
    for (const h of ["", "run", "stored", "measured by", "wasmgap", "medians"]) hr.append(el("th", undefined, h));
    const body = table.createTBody();
    for (const { p, cells } of list) {
      const tr = body.insertRow();
      tr.dataset.run = String(p.run);
      const cb = el("input");
      cb.type = "checkbox";
      cb.checked = checked.has(p.run);
      cb.onchange = () => {
        if (cb.checked) checked.add(p.run);
        else checked.delete(p.run);
        compareBtn.disabled = checked.size !== 2;
        machinesBtn.disabled = checked.size < 2;
      };
      const link = el("a", undefined, `run ${p.run}`);
      link.href = `/runs/${p.run}`;
      link.target = "_blank";
      const td0 = el("td");
      td0.append(cb);
      const td1 = el("td");
      td1.append(link);
      tr.append(td0, td1, el("td", undefined, p.created.replace("T", " ").replace(/\.\d+/, "").replace("Z", " UTC")), el("td", undefined, p.browser ? `${p.source}: ${p.browser}` : p.source), el("td", undefined, p.wasmgap), el("td", undefined, cells.join(", ")));
    }
    runsHost.replaceChildren(el("h3", undefined, "Runs"), table, el("p", "muted small", "Check two runs to compare them cell by cell, or two or more (a farm's, one per machine) to set their machines side by side."));
  };

  const renderTrend = (): void => {
    const e = current?.engines?.find((x) => x.trend !== null);
    if (e) trendSel.value = e.engine;
    if (!e) {
      trendOut.replaceChildren();
      return;
    }
    const table = el("table", "results");
    table.id = "stored-trend-table";
    const hr = table.createTHead().insertRow();
    for (const h of ["wasmgap", "first stored", "runs", "median of medians"]) hr.append(el("th", undefined, h));
    for (const t of e.trend ?? []) {
      const tr = table.createTBody().insertRow();
      tr.append(el("td", undefined, t.wasmgap), el("td", undefined, t.first.slice(0, 10)), el("td", undefined, String(t.runs)), el("td", undefined, duration(t.median_ns)));
    }
    trendOut.replaceChildren(table);
  };

  const compare = async (ids: number[]): Promise<void> => {
    if (ids.length !== 2) return;
    const [a, b] = ids.sort((x, y) => x - y);
    let c: Compared;
    try {
      const resp = await fetch(`/api/results/compare?old=${a}&new=${b}`);
      const body = (await resp.json()) as Compared & { error?: string };
      if (!resp.ok) throw new Error(body.error ?? resp.statusText);
      c = body;
    } catch (err) {
      compareOut.replaceChildren(el("p", "error-text", err instanceof Error ? err.message : String(err)));
      return;
    }
    const oldName = `run ${c.old.id}`;
    const newName = `run ${c.new.id}`;
    // The comparison is part of the tab's state: a link opens it again.
    const q = new URLSearchParams(location.hash.slice(location.hash.indexOf("?") + 1));
    q.set("compare", `${a},${b}`);
    history.replaceState(null, "", `${location.pathname}${location.search}#results?${q}`);
    const busy = (run: ComparedRun, engine: string): boolean => (run.report?.results ?? []).some((r) => r.engine === engine && r.noise?.busy);
    const table = el("table", "results compare");
    table.id = "stored-compare-table";
    const hr = table.createTHead().insertRow();
    for (const h of ["kernel", "engine", oldName, newName, "change", "p"]) hr.append(el("th", undefined, h));
    const side = (s: Side): string => s.failure ?? (s.samples ? duration(s.median_ns) : "–");
    let busyRows = 0;
    for (const ch of c.comparison.changes) {
      const tr = table.createTBody().insertRow();
      tr.dataset.significant = ch.significant ? "1" : "0";
      const onBusy = busy(c.old, ch.engine) || busy(c.new, ch.engine);
      if (onBusy) busyRows++;
      const verdict = ch.note ?? (ch.significant ? `${ch.delta >= 0 ? "+" : "−"}${Math.abs(ch.delta * 100).toFixed(1)}% ${ch.delta >= 0 ? "slower" : "faster"}` : `~ no significant difference (p=${ch.p.toFixed(3)})`);
      const engine = el("td", undefined, info(ch.engine).title);
      engine.title = ch.engine;
      tr.append(el("td", undefined, ch.label), engine, el("td", undefined, side(ch.old)), el("td", undefined, side(ch.new)));
      const change = el("td", ch.significant ? `change significant ${ch.delta >= 0 ? "slower" : "faster"}` : "change", verdict);
      if (onBusy && ch.significant) change.append(el("span", "busy", " (busy machine)"));
      tr.append(change, el("td", undefined, ch.p.toFixed(3)));
    }
    const notes: HTMLElement[] = [];
    if (busyRows > 0) {
      notes.push(
        el(
          "p",
          "warn small",
          `${busyRows} of ${c.comparison.changes.length} cells were measured on a busy machine in one run or both: a change there may be the machine's load, not the code's. Compare runs measured on a quiet machine before reading one.`,
        ),
      );
    }
    compareOut.replaceChildren(
      el("h3", undefined, `Change per cell: ${oldName} → ${newName}`),
      ...notes,
      table,
      el("p", "muted small", `A change is reported when the Mann–Whitney U test's p is below α = ${c.comparison.alpha}, as benchstat and wasmgap results compare decide it; runs on different machines differ by more than their code.`),
    );
  };

  // Runs of one plan on several machines: native's median and each engine's ×native on
  // each machine, and the spread across machines, as the server words them.
  const machines = async (ids: number[]): Promise<void> => {
    if (ids.length < 2) return;
    let m: Machines;
    try {
      const resp = await fetch(`/api/results/machines?ids=${ids.sort((x, y) => x - y).join(",")}`);
      const body = (await resp.json()) as Machines & { error?: string };
      if (!resp.ok) throw new Error(body.error ?? resp.statusText);
      m = body;
    } catch (err) {
      machinesOut.replaceChildren(el("p", "error-text", err instanceof Error ? err.message : String(err)));
      return;
    }
    const table = el("table", "results");
    table.id = "stored-machines-table";
    const hr = table.createTHead().insertRow();
    m.header.forEach((h, i) => {
      const th = el("th", undefined, h);
      const run = m.runs[i - 2];
      if (run) {
        th.dataset.run = String(run.id);
        th.title = `run ${run.id}: ${run.cpu}, ${run.cores} cores`;
      }
      hr.append(th);
    });
    const body = table.createTBody();
    for (const row of m.rows) {
      const tr = body.insertRow();
      tr.dataset.cell = `${row[0]} ${row[1]}`;
      for (const c of row) tr.append(el("td", undefined, c));
    }
    machinesOut.replaceChildren(
      el("h3", undefined, "Machines side by side"),
      table,
      el("p", "muted small", "Native's median per call, each engine's ratio to native on the same machine, and how far that ratio moves across the machines (half its range over its median)."),
    );
  };

  // A link to the tab (#results?kernel=…&args=…&browser=…) opens it as it was.
  if (location.hash.startsWith("#results")) {
    const q = new URLSearchParams(location.hash.slice(location.hash.indexOf("?") + 1));
    if (cat.kernels.some((k) => k.name === q.get("kernel"))) kernelSel.value = q.get("kernel")!;
    argsIn.value = q.get("args") ?? defaults();
    for (const [key, s] of filterSels) {
      const v = q.get(key);
      if (v) s.append(new Option(v, v)), (s.value = v);
    }
    const trend = q.get("trend");
    if (trend) trendSel.append(new Option(trend, trend)), (trendSel.value = trend);
    show(true);
    const ids = (q.get("compare") ?? "").split(",").map(Number).filter((n) => Number.isInteger(n) && n > 0);
    if (ids.length === 2) void compare(ids);
  }

  return {
    async ran(grid: Grid, method, batch): Promise<Stored> {
      // The tab opens on the kernel and arguments just run.
      const first = grid.rows.find((row) => cat.kernels.some((k) => k.name === row.kernel.name));
      if (first && section.hidden) {
        kernelSel.value = first.kernel.name;
        argsIn.value = first.args.join(",");
      }
      const cells: CellResult[] = [];
      for (const s of grid.cells.values()) if (s.kind === "done" && !s.result.failure && s.result.where === "browser" && s.result.samples_ns.length) cells.push(s.result);
      const stored = await storeBrowserCells(cells, method, batch);
      if (stored.run && !section.hidden) void refresh();
      return stored;
    },
  };
}

/** renderPlot draws each engine's medians as points over a box of their quartiles, on a log scale. */
function renderPlot(host: HTMLElement, engines: EngineDistribution[]): void {
  const values = engines.flatMap((e) => [...e.points.map((p) => p.median_ns), ...e.quantiles_ns]).filter((v) => v > 0);
  if (values.length === 0) {
    host.replaceChildren();
    return;
  }
  const WIDTH = Math.max(320, Math.min(host.clientWidth || 760, 1100));
  const LABEL_W = 150;
  const ROW_H = 34;
  let lo = Math.floor(Math.log10(Math.min(...values)));
  let hi = Math.ceil(Math.log10(Math.max(...values)));
  if (hi === lo) hi = lo + 1;
  lo = Math.min(lo, hi - 1);
  const plotW = WIDTH - LABEL_W - 20;
  const x = (ns: number): number => LABEL_W + ((Math.log10(Math.max(ns, 10 ** lo)) - lo) / (hi - lo)) * plotW;
  const height = 24 + engines.length * ROW_H + 8;
  const root = svg("svg", { viewBox: `0 0 ${WIDTH} ${height}`, role: "img", "aria-label": "each engine's medians across stored runs, log scale", class: "chart" });
  root.id = "stored-svg";
  for (let p = lo; p <= hi; p++) {
    const px = x(10 ** p);
    root.append(svg("line", { x1: px, x2: px, y1: 16, y2: height - 4, class: "grid" }));
    root.append(svg("text", { x: px, y: 12, "text-anchor": "middle", class: "axis" }, duration(10 ** p)));
  }
  engines.forEach((e, i) => {
    const y = 24 + i * ROW_H;
    const mid = y + ROW_H / 2;
    const color = info(e.engine).color;
    root.append(svg("text", { x: LABEL_W - 6, y: mid + 4, "text-anchor": "end", class: "name" }, `${info(e.engine).title} (${e.runs})`));
    const [q0, q1, q2, q3, q4] = e.quantiles_ns;
    root.append(svg("line", { x1: x(q0), x2: x(q4), y1: mid, y2: mid, stroke: color, "stroke-width": 1 }));
    const box = svg("rect", { x: x(q1), y: y + 6, width: Math.max(1, x(q3) - x(q1)), height: ROW_H - 12, fill: color, "fill-opacity": 0.18, stroke: color });
    box.append(svg("title", {}, `${info(e.engine).title}: ${e.runs} runs; quartiles ${duration(q1)} – ${duration(q3)}, median ${duration(q2)}`));
    root.append(box);
    root.append(svg("line", { x1: x(q2), x2: x(q2), y1: y + 4, y2: y + ROW_H - 4, stroke: color, "stroke-width": 2 }));
    e.points.forEach((p, j) => {
      const jitter = ((j * 7919) % 13) - 6; // spread the strip without randomness
      const a = document.createElementNS(SVG, "a");
      a.setAttribute("href", `/runs/${p.run}`);
      a.setAttribute("target", "_blank");
      const dot = svg("circle", { cx: x(p.median_ns), cy: mid + jitter, r: 3, fill: color, "fill-opacity": 0.7, class: "stored-point", "data-run": p.run, "data-engine": e.engine });
      dot.append(svg("title", {}, `run ${p.run}: ${duration(p.median_ns)} (${p.browser ? `${p.source}, ${p.browser}` : p.source}, wasmgap ${p.wasmgap})`));
      a.append(dot);
      root.append(a);
    });
  });
  host.replaceChildren(root);
}

/** storeBrowserCells sends a Run's browser cells, with what this browser tells of itself,
 * to be stored in the Run's stored run (its batch's). */
async function storeBrowserCells(cells: CellResult[], method: { runs: number; warmup: number; minSampleMs: number }, batch: string): Promise<Stored> {
  if (cells.length === 0) return { cells: 0 };
  const env = cells[0]!.browser;
  const body = {
    browser: {
      user_agent: env?.user_agent ?? navigator.userAgent,
      hardware_concurrency: env?.cores ?? navigator.hardwareConcurrency ?? 0,
      cross_origin_isolated: env?.cross_origin_isolated ?? crossOriginIsolated,
      timer_resolution_ns: env?.timer_resolution_ns ?? 0,
    },
    method: { runs: method.runs, warmup: method.warmup, min_sample_ns: method.minSampleMs * 1e6 },
    cells: cells.map((c) => ({ kernel: c.kernel, args: c.args, engine: c.engine, warmup: c.warmup, calls: c.calls, value: c.value, samples_ns: c.samples_ns, first_ns: c.first_ns ?? 0 })),
    batch,
  };
  try {
    const resp = await fetch("/api/results/share", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const answer = (await resp.json()) as { run?: number; error?: string };
    if (!resp.ok) throw new Error(answer.error ?? resp.statusText);
    return { run: answer.run, cells: cells.length };
  } catch (err) {
    return { cells: cells.length, error: err instanceof Error ? err.message : String(err) };
  }
}
