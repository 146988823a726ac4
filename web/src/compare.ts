// The comparison of the live run with a saved one (`wasmgap bench --format json`, read from
// a file the person picks): each cell both have, its median time per call with the 95%
// interval on each side, and the change, or "~ no significant difference" where the
// intervals overlap — as `wasmgap compare` prints it (package report's Compare).

import { duration, label } from "./format";
import type { Grid } from "./results";
import { type Interval, median, medianCI, spread } from "./stats";

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

/** One side of a compared cell: the median per call and its interval, from the samples. */
export interface Side {
  median_ns: number;
  ci?: Interval;
  samples: number;
}

/** One cell in both runs. */
export interface CellChange {
  label: string;
  engine: string;
  saved: Side;
  live: Side;
  /** live median over saved median, minus one. */
  delta: number;
  /** Both intervals exist and do not overlap. */
  significant: boolean;
  note?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** parseSavedRun reads a report of `wasmgap bench --format json`, or throws an Error that
 * says what the file is instead. */
export function parseSavedRun(name: string, text: string): SavedRun {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(`${name} is not JSON (${err instanceof Error ? err.message : String(err)}): save a run with \`wasmgap bench --format json > run.json\``);
  }
  if (!isObject(data)) throw new Error(`${name} is not a \`wasmgap bench --format json\` report: its JSON is not an object`);
  for (const key of ["method", "environment", "results"]) {
    if (!(key in data)) {
      throw new Error(
        `${name} is not a \`wasmgap bench --format json\` report: it has no "${key}" field (its fields are ${Object.keys(data).sort().join(", ") || "none"}; a report has method, environment and results)`,
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

function sideOf(samples: number[]): Side {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median_ns: median(sorted), ci: medianCI(sorted), samples: sorted.length };
}

const keyOf = (kernel: string, args: number[], engine: string): string => `${label(kernel, args)} on ${engine}`;

/** compareRuns matches the live grid's finished cells with the saved run's, by kernel,
 * arguments and engine. */
export function compareRuns(grid: Grid, saved: SavedRun): { changes: CellChange[]; onlySaved: string[] } {
  const savedCells = new Map<string, SavedCell>();
  for (const c of saved.results) savedCells.set(keyOf(c.kernel, c.args, c.engine), c);
  const changes: CellChange[] = [];
  const matched = new Set<string>();
  grid.rows.forEach((row, r) => {
    for (const engine of grid.engines) {
      const key = keyOf(row.kernel.name, row.args, engine);
      const old = savedCells.get(key);
      const s = grid.get(r, engine);
      if (!old || s.kind !== "done") continue;
      matched.add(key);
      const live = s.result;
      const ch: CellChange = {
        label: row.label,
        engine,
        saved: sideOf(old.samples_ns ?? []),
        live: sideOf(live.samples_ns),
        delta: 0,
        significant: false,
      };
      if (old.failure) ch.note = `failed in ${saved.name}: ${old.failure}`;
      else if (live.failure) ch.note = `failed in the live run: ${live.failure}`;
      else if (!ch.saved.samples || !ch.live.samples) ch.note = "no samples";
      else {
        ch.delta = ch.live.median_ns / ch.saved.median_ns - 1;
        const a = ch.saved.ci;
        const b = ch.live.ci;
        if (!a || !b) ch.note = `too few samples for 95% intervals (${ch.saved.samples} and ${ch.live.samples}: 6 needed)`;
        else ch.significant = a.hi_ns < b.lo_ns || b.hi_ns < a.lo_ns;
      }
      changes.push(ch);
    }
  });
  const onlySaved = [...savedCells.keys()].filter((k) => !matched.has(k));
  return { changes, onlySaved };
}

/** verdict renders a change as `wasmgap compare` does. */
export function verdict(ch: CellChange): string {
  if (ch.note) return ch.note;
  if (!ch.significant) return "~ no significant difference";
  const pct = ch.delta * 100;
  return `${pct >= 0 ? "+" : "−"}${Math.abs(pct).toFixed(1)}%`;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

const sideText = (s: Side): string => (s.samples ? `${duration(s.median_ns)} ${spread(s.median_ns, s.ci)}` : "–");

/** The compare view: a file picker and, once a run is loaded, its comparison with the live grid. */
export class CompareView {
  private saved: SavedRun | undefined;
  private readonly out: HTMLElement;

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
    const { changes, onlySaved } = compareRuns(this.grid(), saved);
    const parts: Node[] = [];
    const when = [saved.time ? saved.time.replace("T", " ").replace(/\.\d+/, "") : "", saved.cpu ?? ""].filter(Boolean).join(", ");
    parts.push(el("p", "muted small", `${saved.name}${when ? ` (${when})` : ""}: ${saved.results.length} cells.`));
    if (changes.length === 0) {
      parts.push(
        el(
          "p",
          "muted",
          `No finished live cell matches a cell of ${saved.name} (same kernel, arguments and engine). Its cells: ${onlySaved.slice(0, 8).join(", ")}${onlySaved.length > 8 ? ", …" : ""}.`,
        ),
      );
    } else {
      const table = el("table", "results compare");
      table.id = "compare-table";
      const hr = table.createTHead().insertRow();
      for (const h of ["kernel", "engine", saved.name, "live", "change"]) hr.append(el("th", undefined, h));
      const body = table.createTBody();
      for (const ch of changes) {
        const tr = body.insertRow();
        tr.dataset.kernel = ch.label;
        tr.dataset.engine = ch.engine;
        tr.dataset.significant = ch.significant ? "1" : "0";
        tr.append(el("td", undefined, ch.label), el("td", undefined, ch.engine), el("td", undefined, sideText(ch.saved)), el("td", undefined, sideText(ch.live)));
        tr.append(el("td", ch.significant ? "change significant" : "change", verdict(ch)));
      }
      parts.push(table);
      parts.push(
        el(
          "p",
          "muted small",
          "A change is significant when the two medians' 95% intervals (order statistics, from each side's samples) do not overlap; " +
            "“~” where they overlap, as benchstat and `wasmgap compare` print it. Runs on different machines or days differ by more than their code.",
        ),
      );
    }
    this.out.replaceChildren(...parts);
  }
}
