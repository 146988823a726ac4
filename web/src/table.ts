// The results table, shaped like the articles' tables: kernels as rows, engines as columns.

import type { CellState } from "./cells";
import { duration, interval, ratio, ratioInterval } from "./format";
import { summary } from "./lessons";
import { spread, wide } from "./stats";
import { info } from "./engines";
import { type Grid, medianText } from "./results";
import { type HistoryRow, shown } from "./history";
import { failureKind } from "./failure";
import { elapsedSpan } from "./elapsed";
import { el } from "./dom";

export interface TableHooks {
  /** Called when a finished cell is clicked: open its details. */
  details(row: number, engine: string): void;
  /** The rows' order: by an engine's medians (1 fastest first, -1 slowest first), else as chosen. */
  sort?: { engine: string; dir: 1 | -1 };
  /** Called when an engine's header is clicked: sort by it, reverse, or stop sorting. */
  sortBy?(engine: string): void;
  /** An engine's column title, when not its name (a stored run's browser, named). */
  title?(engine: string): string;
}

/** order lists the grid's rows in the table's order: by the sorted engine's medians, the
 * rows without one last, else as the kernels were chosen. */
function rowOrder(grid: Grid, sort: TableHooks["sort"]): number[] {
  const rows = grid.rows.map((_, r) => r);
  if (!sort) return rows;
  const key = (r: number): number => grid.result(r, sort.engine)?.median_ns ?? Number.POSITIVE_INFINITY;
  return rows.sort((a, b) => {
    const x = key(a);
    const y = key(b);
    if (x === y) return a - b;
    if (!Number.isFinite(x)) return 1;
    if (!Number.isFinite(y)) return -1;
    return (x - y) * sort.dir;
  });
}

/** breakAfterDash writes text into e with each end of a range ("0.02 ns–248 µs", "0.00–26315")
 * kept whole and the line free to break after the dash, so that a wide interval wraps in its
 * cell rather than widening the table; e's text stays the range as written. */
function breakAfterDash(e: HTMLElement, text: string): HTMLElement {
  text.split("–").forEach((part, i) => {
    if (i > 0) e.append("–", document.createElement("wbr"));
    e.append(el("span", "nobreak", part));
  });
  return e;
}

/** renderTable draws the whole table into host. */
export function renderTable(host: HTMLElement, grid: Grid, hooks: TableHooks, history: HistoryRow[] | undefined): void {
  const table = el("table", "results");
  table.id = "results-table";
  const thead = table.createTHead();
  const hr = thead.insertRow();
  const corner = el("th", "corner", "kernel");
  corner.scope = "col";
  hr.append(corner);
  for (const e of grid.engines) {
    const th = el("th");
    th.scope = "col";
    th.dataset.engine = e;
    const sw = el("span", "swatch");
    sw.style.background = info(e).color;
    th.append(sw, document.createTextNode(hooks.title?.(e) ?? info(e).title));
    th.title = hooks.sortBy ? `${info(e).what}: click to sort the rows by its times` : info(e).what;
    if (hooks.sortBy) {
      const sortBy = hooks.sortBy;
      th.tabIndex = 0;
      th.classList.add("sortable");
      th.setAttribute("aria-sort", hooks.sort?.engine === e ? (hooks.sort.dir === 1 ? "ascending" : "descending") : "none");
      th.onclick = () => sortBy(e);
      th.onkeydown = (ev) => {
        if (ev.key === "Enter" || ev.key === " ") {
          ev.preventDefault();
          sortBy(e);
        }
      };
    }
    hr.append(th);
  }
  const tbody = table.createTBody();
  for (const r of rowOrder(grid, hooks.sort)) {
    const row = grid.rows[r]!;
    const tr = tbody.insertRow();
    tr.dataset.kernel = row.kernel.name;
    tr.dataset.row = String(r);
    const th = el("th", "rowhead");
    th.scope = "row";
    th.append(el("code", undefined, row.label), el("small", undefined, row.kernel.summary));
    tr.append(th);
    for (const e of grid.engines) {
      const td = tr.insertCell();
      td.dataset.engine = e;
      // A phone shows each kernel as a card, a line per engine headed by its name.
      td.dataset.label = info(e).title;
      td.style.setProperty("--swatch", info(e).color);
      fillCell(td, grid, r, e, hooks);
    }
    for (const h of history?.filter((h) => h.kernel === row.kernel.name) ?? []) {
      const htr = tbody.insertRow();
      htr.className = "history";
      const hth = el("th", "rowhead");
      hth.scope = "row";
      hth.append(el("span", undefined, `${h.label}`), el("small", undefined, h.source));
      htr.append(hth);
      const td = htr.insertCell();
      td.colSpan = grid.engines.length;
      td.className = "history-cells";
      for (const f of h.figures) {
        const chip = el("span", "chip");
        chip.title = f.detail;
        chip.append(el("b", undefined, f.runtime), document.createTextNode(" "), el("span", f.failure ? "failure" : undefined, shown(f, duration)));
        td.append(chip);
      }
    }
  }
  fillSummary(table, grid);
  host.replaceChildren(table);
}

/**
 * fillSummary writes the table's last row: each engine's geometric mean of × over the
 * kernels run, with its interval (lessons.summary), as JetStream gives one score; none
 * for a table of one kernel, whose × says it already.
 */
function fillSummary(table: HTMLTableElement, grid: Grid): void {
  table.tFoot?.remove();
  if (grid.rows.length < 2) return;
  const sums = summary(grid);
  if (sums.size === 0) return;
  const tr = table.createTFoot().insertRow();
  tr.className = "summary";
  const th = el("th", "rowhead");
  th.scope = "row";
  th.append(el("span", undefined, "geometric mean of ×"), el("small", undefined, "over the kernels each engine ran"));
  tr.append(th);
  const bases = new Set(grid.rows.map((_, r) => grid.baseline(r)));
  for (const e of grid.engines) {
    const td = tr.insertCell();
    td.dataset.engine = e;
    td.dataset.label = info(e).title;
    td.className = "cell";
    const s = sums.get(e);
    if (s) {
      const iv = ratioInterval(s.r);
      td.append(el("span", "ratio", ratio(s.r.x)));
      if (iv) td.append(el("span", "spread", iv));
      if (s.rows < grid.rows.length) td.append(el("span", "incomplete", `${s.rows} of ${grid.rows.length} kernels`));
      td.title = `${info(e).title}: the geometric mean of its × over ${s.rows} kernel${s.rows === 1 ? "" : "s"}${iv ? `, 95% interval ${iv}` : ", no interval (a cell measured in one process)"}`;
    } else if (bases.has(e)) td.append(el("span", "ratio base", "×1"));
  }
}

/** updateRow redraws one row's cells (a cell's change can move its row's ratios). */
export function updateRow(host: HTMLElement, grid: Grid, r: number, hooks: TableHooks): void {
  const tr = host.querySelector<HTMLTableRowElement>(`tbody tr[data-row="${r}"]`);
  if (!tr) return;
  for (const e of grid.engines) {
    const td = tr.querySelector<HTMLTableCellElement>(`td[data-engine="${CSS.escape(e)}"]`);
    if (td) fillCell(td, grid, r, e, hooks);
  }
  const table = host.querySelector<HTMLTableElement>("table");
  if (table) fillSummary(table, grid);
}

function fillCell(td: HTMLTableCellElement, grid: Grid, r: number, engine: string, hooks: TableHooks): void {
  const s: CellState = grid.get(r, engine);
  td.className = `cell ${s.kind}`;
  td.dataset.state = s.kind;
  td.onclick = null;
  td.tabIndex = -1;
  td.removeAttribute("role");
  const parts: Node[] = [];
  switch (s.kind) {
    case "idle":
      parts.push(el("span", "muted", "·"));
      break;
    case "pending":
      parts.push(el("span", "muted", "waiting"));
      break;
    case "queued":
      parts.push(el("span", "muted", `queued: #${s.position} in line`));
      break;
    case "running": {
      const p = s.progress;
      const bar = el("progress");
      if (p && p.total > 0) {
        bar.max = p.total;
        bar.value = p.done;
      }
      parts.push(bar, el("span", "muted", p ? `${p.phase}${p.total > 1 ? ` ${p.done}/${p.total}` : ""}` : "running"));
      if (s.since !== undefined) parts.push(elapsedSpan(s.since));
      break;
    }
    case "cancelled":
      parts.push(el("span", "muted", "cancelled"));
      break;
    case "na":
      parts.push(el("span", "muted", "n/a"));
      td.title = `${info(engine).title} does not run kernels.wasm: ${grid.rows[r]?.kernel.name ?? "this kernel"} times a call into it`;
      break;
    case "error":
      td.classList.add("failed");
      parts.push(el("span", "error-text", s.message));
      break;
    case "done": {
      const res = s.result;
      if (res.failure) {
        // One line, the same words on every tier; the whole text and the engine's note
        // (a browser worker's stack, its timer) are in the details dialog.
        td.classList.add("failed");
        parts.push(el("span", "failure", failureKind(res.failure)));
      } else {
        const med = el("span", "median", medianText(res, duration));
        med.dataset.ns = String(res.median_ns);
        // One figure: the median, its interval and its ×; k, min–max and the first call
        // are in the details.
        const isWide = wide(res.median_ns, res.ci);
        const sp = breakAfterDash(el("span", isWide ? "spread wide" : "spread"), ` ${interval(res.median_ns, res.ci, spread(res.median_ns, res.ci))}`);
        sp.title = res.ci
          ? `95% confidence interval of the median: ${duration(res.ci.lo_ns)} – ${duration(res.ci.hi_ns)}${isWide ? " (wider than ±5%: read with care)" : ""}`
          : "too few samples for a 95% interval (6 needed)";
        parts.push(med, sp);
        // A user's kernel: the value it returned (the tiers must agree).
        if (grid.rows[r]?.kernel.group === "custom") parts.push(el("span", "value", `returned ${res.value}`));
        const x = grid.ratioWithInterval(r, engine);
        if (x !== undefined) {
          const xs = el("span", "ratio", ratio(x.x));
          xs.title = ratioInterval(x) ? `95% interval of the ratio: ${ratioInterval(x)}, from both cells' processes` : "no interval: a cell measured in one process";
          parts.push(xs);
          if (ratioInterval(x)) parts.push(breakAfterDash(el("span", "ratio-ci"), ratioInterval(x)));
        }
        else if (grid.baseline(r) === engine) parts.push(el("span", "ratio base", "×1"));
        if (res.noise?.busy) {
          const b = el("span", "busy", "busy");
          b.title = `a busy machine: load average ${res.noise.load1.toFixed(2)}, other processes ${res.noise.other_cpu.toFixed(2)} cores during the samples`;
          parts.push(b);
        }
        if (grid.requestedRuns > 0 && res.runs < grid.requestedRuns) {
          const fit = el("span", "incomplete", `${res.runs} of ${grid.requestedRuns} runs`);
          fit.title = `${res.runs} of the ${grid.requestedRuns} timed runs asked for fit the time limit`;
          parts.push(fit);
        }
      }
      td.dataset.value = res.value;
      // k and the first call are in the details; the cell keeps them for scripts and tests.
      td.dataset.calls = String(res.calls ?? 1);
      if (res.first_ns !== undefined) td.dataset.firstNs = String(res.first_ns);
      td.tabIndex = 0;
      td.setAttribute("role", "button");
      td.title = res.failure ? `${res.failure.split("\n")[0]} (click for the method, the environment and the whole text)` : "method and environment";
      td.onclick = () => hooks.details(r, engine);
      td.onkeydown = (ev) => {
        if (ev.key === "Enter" || ev.key === " ") {
          ev.preventDefault();
          hooks.details(r, engine);
        }
      };
      break;
    }
  }
  td.replaceChildren(...parts);
}
