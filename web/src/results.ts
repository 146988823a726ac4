// The results grid: kernels (with their arguments) as rows, engines as columns, one cell
// state each; and the ratios to the baseline engine, taken within one row of one run.

import type { CellState } from "./cells";
import { runs } from "./engines";
import { label } from "./format";
import { DEFAULT_WARMUP_MS } from "./harness";
import { baseline, baseRatio, type Ratio } from "./stats";
import type { CellResult, Kernel } from "./types";

export interface Row {
  kernel: Kernel;
  args: number[];
  label: string;
  /** The page's own objection to the arguments, if any (the server's is in the cells). */
  invalid?: string;
}

/** belowResolution reports whether a browser sample (k calls) is within the timer's
 * smallest step: such a time says "faster than the clock can tell", and no ratio can be
 * taken from it. Calibrated samples last milliseconds, far above the step. */
export function belowResolution(res: CellResult): boolean {
  const step = res.browser?.timer_resolution_ns ?? 0;
  return res.where === "browser" && step > 0 && res.median_ns * (res.calls ?? 1) <= step;
}

/** medianText is a result's median as the table, chart and Markdown print it. */
export function medianText(res: CellResult, fmt: (ns: number) => string): string {
  return belowResolution(res) ? `≤ ${fmt(res.browser?.timer_resolution_ns ?? 0)}` : fmt(res.median_ns);
}

export class Grid {
  readonly cells = new Map<string, CellState>();
  /** The timed runs asked for (a server cell may fit fewer in its time limit). */
  requestedRuns = 0;
  /** The warm-up's minimum the run asked for, in ms (warmup_ms): what the method line states. */
  warmupMs = DEFAULT_WARMUP_MS;
  /** The engine the × column is taken against, where it has a time (the page's choice). */
  base = "native";
  constructor(
    readonly rows: Row[],
    readonly engines: string[],
    initial: "idle" | "pending" = "pending",
  ) {
    for (let r = 0; r < rows.length; r++) {
      for (const e of engines) this.cells.set(Grid.key(r, e), runs(rows[r]!.kernel, e) ? { kind: initial } : { kind: "na" });
    }
  }

  static row(kernel: Kernel, args: number[], invalid?: string): Row {
    return { kernel, args, label: label(kernel.name, args.map((a) => (Number.isNaN(a) ? Number.NaN : a))), invalid };
  }

  static key(row: number, engine: string): string {
    return `${row}|${engine}`;
  }

  get(row: number, engine: string): CellState {
    return this.cells.get(Grid.key(row, engine)) ?? { kind: "pending" };
  }

  set(row: number, engine: string, s: CellState): void {
    this.cells.set(Grid.key(row, engine), s);
  }

  /** result returns a cell's measurement when it has times (no failure). */
  result(row: number, engine: string): CellResult | undefined {
    const s = this.get(row, engine);
    return s.kind === "done" && !s.result.failure ? s.result : undefined;
  }

  /** baseline names the engine ratios are taken against in a row (stats.baseline, the
   * CLI's rule): the chosen base when it has a time, else native, else browser-wasm. */
  baseline(row: number): string | undefined {
    return baseline(this.base, (e) => this.engines.includes(e) && !!this.result(row, e));
  }

  /** ratioWithInterval is a cell's time over its row's baseline's with its interval from
   * both cells' executions (stats.baseRatio), or undefined. */
  ratioWithInterval(row: number, engine: string): Ratio | undefined {
    const base = this.baseline(row);
    const b = base ? this.result(row, base) : undefined;
    const c = this.result(row, engine);
    if (!b || !c || belowResolution(b) || belowResolution(c)) return undefined;
    return baseRatio(c, b);
  }

  /** ratio is a cell's time over its row's baseline's (ratioWithInterval's x), or undefined. */
  ratio(row: number, engine: string): number | undefined {
    return this.ratioWithInterval(row, engine)?.x;
  }

  /** hasOutcome reports whether a cell holds a measurement or a failure. */
  hasOutcome(row: number, engine: string): boolean {
    const k = this.get(row, engine).kind;
    return k === "done" || k === "error";
  }

  /**
   * measured is the part of the grid that holds outcomes: the rows and engines with at
   * least one measured or failed cell (what Copy as Markdown copies), or undefined.
   */
  measured(): Grid | undefined {
    const rows = this.rows.map((_, r) => r).filter((r) => this.engines.some((e) => this.hasOutcome(r, e)));
    const engines = this.engines.filter((e) => rows.some((r) => this.hasOutcome(r, e)));
    if (rows.length === 0) return undefined;
    const g = new Grid(rows.map((r) => this.rows[r]!), engines, "idle");
    g.requestedRuns = this.requestedRuns;
    g.warmupMs = this.warmupMs;
    g.base = this.base;
    rows.forEach((r, i) => {
      for (const e of engines) g.set(i, e, this.get(r, e));
    });
    return g;
  }

  /** finished reports whether every cell has an outcome. */
  finished(): boolean {
    for (const s of this.cells.values()) if (s.kind === "pending" || s.kind === "queued" || s.kind === "running") return false;
    return true;
  }
}
