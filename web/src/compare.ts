// The comparison of the live run with a saved one (`wasmgap bench --format json`, read from
// a file the person picks): each cell both have, its median time per call with the 95%
// interval on each side, and the change. The server decides it (POST /api/compare) with the
// code of `wasmgap compare` (package report: the Mann–Whitney U test at α = 0.05 and
// benchstat's sample minimum), so the page and the CLI give one verdict for the same samples.

import { failure } from "./api";
import { duration, label } from "./format";
import type { Grid } from "./results";
import { type Interval, spread } from "./stats";
import { el } from "./dom";

/** One cell of a saved report (measure.Result's JSON, the fields the comparison reads). */
export interface SavedCell {
  kernel: string;
  args: number[];
  engine: string;
  samples_ns?: number[];
  calls?: number;
  failure?: string;
}

/** A saved run: its file name, when and where it was made, and its cells. */
export interface SavedRun {
  name: string;
  time?: string;
  cpu?: string;
  results: SavedCell[];
}

/** One side of a compared cell, as the server summarises it from the samples (report.Side). */
export interface Side {
  median_ns: number;
  ci?: Interval;
  samples: number;
  failure?: string;
}

/** One cell in both runs, as POST /api/compare answers it (report.Change and its verdict). */
export interface CellChange {
  label: string;
  engine: string;
  old: Side;
  new: Side;
  /** new median over old median, minus one. */
  delta: number;
  /** The Mann–Whitney U test's p-value (1 where it cannot be computed). */
  p: number;
  /** p below α and both sides with enough samples, as benchstat and `wasmgap compare` decide. */
  significant: boolean;
  note?: string;
  /** The change as `wasmgap compare` prints it: "+12.3%", "~ no significant difference (p=0.394)", or a note. */
  verdict: string;
}

/** The answer of POST /api/compare. */
export interface Comparison {
  changes: CellChange[];
  only_old?: string[];
  only_new?: string[];
  alpha: number;
  samples_needed: number;
}

/** A cell as POST /api/compare reads it. */
export interface CompareCell {
  kernel: string;
  args: number[];
  engine: string;
  samples_ns: number[];
  calls?: number;
  failure?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** parseSavedRun reads a report of `wasmgap bench --format json`, or throws an Error that
 * says what the file is instead. */
export function parseSavedRun(name: string, text: string): SavedRun {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(`${name} is not JSON (${err instanceof Error ? err.message : String(err)}): save a run with wasmgap bench --format json > run.json`);
  }
  if (!isObject(data)) throw new Error(`${name} is not a “wasmgap bench --format json” report: its JSON is not an object`);
  for (const key of ["method", "environment", "results"]) {
    if (!(key in data)) {
      throw new Error(
        `${name} is not a “wasmgap bench --format json” report: it has no "${key}" field (its fields are ${Object.keys(data).sort().join(", ") || "none"}; a report has method, environment and results)`,
      );
    }
  }
  const results = data.results;
  if (!Array.isArray(results) || results.length === 0) throw new Error(`${name} has no cells: nothing to compare`);
  const cells: SavedCell[] = results.map((r, i) => {
    if (!isObject(r) || typeof r.kernel !== "string" || typeof r.engine !== "string" || !Array.isArray(r.args)) {
      throw new Error(`${name}: cell ${i + 1} names no kernel, arguments or engine`);
    }
    const samples = Array.isArray(r.samples_ns) ? r.samples_ns.filter((s): s is number => typeof s === "number") : undefined;
    return {
      kernel: r.kernel,
      args: r.args.map(Number),
      engine: r.engine,
      samples_ns: samples,
      calls: typeof r.calls === "number" ? r.calls : undefined,
      failure: typeof r.failure === "string" && r.failure ? r.failure : undefined,
    };
  });
  const env = isObject(data.environment) ? data.environment : {};
  return {
    name,
    time: typeof env.time === "string" ? env.time : undefined,
    cpu: typeof env.cpu === "string" ? env.cpu : undefined,
    results: cells,
  };
}

const keyOf = (kernel: string, args: number[], engine: string): string => `${label(kernel, args)} on ${engine}`;

/** liveCells lists the live grid's finished cells that the saved run also has (same kernel,
 * arguments and engine), in the shape POST /api/compare reads. */
export function liveCells(grid: Grid, saved: SavedRun): CompareCell[] {
  const savedKeys = new Set(saved.results.map((c) => keyOf(c.kernel, c.args, c.engine)));
  const cells: CompareCell[] = [];
  grid.rows.forEach((row, r) => {
    for (const engine of grid.engines) {
      const s = grid.get(r, engine);
      if (s.kind !== "done" || !savedKeys.has(keyOf(row.kernel.name, row.args, engine))) continue;
      const res = s.result;
      cells.push({ kernel: row.kernel.name, args: row.args, engine, samples_ns: res.samples_ns ?? [], calls: res.calls, failure: res.failure || undefined });
    }
  });
  return cells;
}

/** compareOnServer asks the server to compare the saved run (old) with the live cells (new). */
export async function compareOnServer(saved: SavedRun, live: CompareCell[], signal?: AbortSignal): Promise<Comparison> {
  const old = saved.results.map((c) => ({ kernel: c.kernel, args: c.args, engine: c.engine, samples_ns: c.samples_ns ?? [], calls: c.calls, failure: c.failure }));
  const resp = await fetch("/api/compare", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ old, new: live }), signal });
  if (!resp.ok) throw await failure(resp);
  const c = (await resp.json()) as Comparison;
  c.changes = c.changes ?? [];
  return c;
}

/** sideText renders one side as `wasmgap compare` does: its failure, or its median ± the interval. */
const sideText = (s: Side): string => {
  if (s.failure) return s.failure;
  if (!s.samples) return "–";
  return `${duration(s.median_ns)} ${spread(s.median_ns, s.ci?.level ? s.ci : undefined)}`;
};

/** The compare view: a file picker and, once a run is loaded, its comparison with the live grid. */
export class CompareView {
  private saved: SavedRun | undefined;
  private readonly out: HTMLElement;
  /** The comparison in flight: a newer render aborts it, so an older answer never overwrites a newer one. */
  private pending: AbortController | undefined;

  constructor(
    host: HTMLElement,
    private readonly grid: () => Grid,
  ) {
    const bar = el("div", "toolbar");
    const pick = el("label", "toggle");
    const input = el("input");
    input.type = "file";
    input.accept = ".json,application/json";
    input.id = "compare-file";
    pick.append("Compare with a saved run ", el("small", "muted", "(wasmgap bench --format json)"), " ", input);
    bar.append(pick);
    this.out = el("div", "compare-out");
    this.out.id = "compare-out";
    host.replaceChildren(bar, this.out);
    input.onchange = async () => {
      const file = input.files?.[0];
      if (!file) return;
      try {
        this.saved = parseSavedRun(file.name, await file.text());
      } catch (err) {
        this.saved = undefined;
        this.pending?.abort();
        this.out.replaceChildren(el("p", "error-text", err instanceof Error ? err.message : String(err)));
        return;
      }
      this.render();
    };
  }

  /** render redraws the comparison with the live grid (after every finished cell or run). */
  render(): void {
    const saved = this.saved;
    if (!saved) return;
    this.pending?.abort();
    const when = [saved.time ? saved.time.replace("T", " ").replace(/\.\d+/, "") : "", saved.cpu ?? ""].filter(Boolean).join(", ");
    const intro = el("p", "muted small", `${saved.name}${when ? ` (${when})` : ""}: ${saved.results.length} cells.`);
    const live = liveCells(this.grid(), saved);
    if (live.length === 0) {
      const cells = saved.results.map((c) => keyOf(c.kernel, c.args, c.engine));
      this.out.replaceChildren(
        intro,
        el(
          "p",
          "muted",
          `No finished live cell matches a cell of ${saved.name} (same kernel, arguments and engine). Its cells: ${cells.slice(0, 8).join(", ")}${cells.length > 8 ? ", …" : ""}.`,
        ),
      );
      return;
    }
    const pending = new AbortController();
    this.pending = pending;
    compareOnServer(saved, live, pending.signal).then(
      (c) => {
        if (pending.signal.aborted) return;
        this.out.replaceChildren(intro, ...this.table(saved, c));
      },
      (err: unknown) => {
        if (pending.signal.aborted) return;
        this.out.replaceChildren(intro, el("p", "error-text", `The comparison failed: ${err instanceof Error ? err.message : String(err)}`));
      },
    );
  }

  private table(saved: SavedRun, c: Comparison): Node[] {
    const table = el("table", "results compare");
    table.id = "compare-table";
    const hr = table.createTHead().insertRow();
    for (const h of ["kernel", "engine", saved.name, "live", "change", "p"]) hr.append(el("th", undefined, h));
    const body = table.createTBody();
    for (const ch of c.changes) {
      const tr = body.insertRow();
      tr.dataset.kernel = ch.label;
      tr.dataset.engine = ch.engine;
      tr.dataset.significant = ch.significant ? "1" : "0";
      tr.append(el("td", undefined, ch.label), el("td", undefined, ch.engine), el("td", undefined, sideText(ch.old)), el("td", undefined, sideText(ch.new)));
      tr.append(el("td", ch.significant ? "change significant" : "change", ch.verdict));
      tr.append(el("td", "muted", ch.note && ch.p === 1 ? "" : ch.p.toFixed(3)));
    }
    return [
      table,
      el(
        "p",
        "muted small",
        `As wasmgap compare and benchstat decide: a change is reported when the Mann–Whitney U test's p is below α = ${c.alpha} and each side has at least ${c.samples_needed} samples; ` +
          "otherwise “~” with its p. Each side's median ± its 95% interval comes from its samples. Runs on different machines or days differ by more than their code.",
      ),
    ];
  }
}
