// The chart of the results: one horizontal bar per cell, grouped by kernel, on a log
// scale of time (the gaps span six orders of magnitude), engines in their table colours.

import { failureKind } from "./failure";
import { info } from "./engines";
import { duration } from "./format";
import { type HistoryRow, shown } from "./history";
import { belowResolution, type Grid, medianText } from "./results";
import { svg } from "./dom";

const BAR_H = 14;
const GAP = 4;
const GROUP_GAP = 16;

interface Bar {
  name: string;
  color: string;
  ns?: number;
  text?: string;
  historical?: boolean;
  /** A caption line instead of a bar (which article table the bars below come from). */
  caption?: boolean;
  /** The time is under the timer's step: printed, not drawn. */
  below?: boolean;
}

/** renderChart draws the grid (and the historical figures, when given) into host. */
export function renderChart(host: HTMLElement, grid: Grid, history: HistoryRow[] | undefined): void {
  const groups: { title: string; bars: Bar[] }[] = grid.rows.map((row, r) => {
    const bars: Bar[] = [];
    for (const e of grid.engines) {
      const s = grid.get(r, e);
      const color = info(e).color;
      if (s.kind === "done" && !s.result.failure && belowResolution(s.result)) bars.push({ name: info(e).title, color, text: medianText(s.result, duration), below: true });
      else if (s.kind === "done" && !s.result.failure) bars.push({ name: info(e).title, color, ns: s.result.median_ns });
      else if (s.kind === "done") bars.push({ name: info(e).title, color, text: failureKind(s.result.failure ?? "") });
      else if (s.kind === "error") bars.push({ name: info(e).title, color, text: "error" });
    }
    for (const h of history?.filter((h) => h.kernel === row.kernel.name) ?? []) {
      bars.push({ name: `the article: ${h.label}, ${h.source}`, color: "", caption: true });
      for (const f of h.figures) {
        const drawn = !f.failure && f.seconds > 0;
        bars.push({ name: f.runtime, color: "var(--historical)", historical: true, ...(drawn ? { ns: f.seconds * 1e9 } : { text: shown(f, duration), below: !f.failure }) });
      }
    }
    return { title: row.label, bars };
  });
  const values = groups.flatMap((g) => g.bars.map((b) => b.ns).filter((v): v is number => v !== undefined && v > 0));
  if (values.length === 0) {
    host.replaceChildren();
    host.hidden = true;
    return;
  }
  host.hidden = false;
  // Drawn at the host's own width, so that its text stays readable on a phone.
  const WIDTH = Math.max(320, Math.min(host.clientWidth || 760, 1100));
  const longest = Math.max(0, ...groups.flatMap((g) => g.bars.filter((b) => !b.caption).map((b) => b.name.length)));
  // A phone gives the names up to 20 characters ("wazero interpreter" whole), a wider host 33.
  const LABEL_W = WIDTH < 500 ? Math.min(136, Math.max(90, Math.round(longest * 6.2) + 12)) : Math.min(220, Math.max(150, Math.round(longest * 6.4) + 12));
  const maxChars = Math.floor((LABEL_W - 10) / 6.2);
  const fit = (name: string): string => (name.length > maxChars ? `${name.slice(0, maxChars - 1)}…` : name);
  const RIGHT_PAD = WIDTH < 500 ? 64 : 90;
  let lo = Math.floor(Math.log10(Math.min(...values)));
  let hi = Math.ceil(Math.log10(Math.max(...values)));
  if (hi === lo) hi = lo + 1;
  lo = Math.min(lo, hi - 1);
  const plotW = WIDTH - LABEL_W - RIGHT_PAD;
  const x = (ns: number): number => LABEL_W + ((Math.log10(Math.max(ns, 10 ** lo)) - lo) / (hi - lo)) * plotW;

  const rows = groups.reduce((n, g) => n + Math.max(g.bars.length, 1), 0);
  const height = 28 + rows * (BAR_H + GAP) + groups.length * (GROUP_GAP + 14) + 10;
  const root = svg("svg", { viewBox: `0 0 ${WIDTH} ${height}`, role: "img", "aria-label": "median time per kernel and engine, log scale", class: "chart" });

  // Axis: one line per power of ten.
  const every = Math.max(1, Math.ceil(52 / (plotW / (hi - lo)))); // label spacing ≥ 52 px
  for (let p = lo; p <= hi; p++) {
    const px = x(10 ** p);
    root.append(svg("line", { x1: px, x2: px, y1: 18, y2: height - 6, class: "grid" }));
    if ((p - lo) % every === 0) root.append(svg("text", { x: px, y: 12, "text-anchor": "middle", class: "axis" }, duration(10 ** p)));
  }

  let y = 28;
  for (const g of groups) {
    root.append(svg("text", { x: 0, y: y + 10, class: "group" }, g.title));
    y += 14 + 2;
    for (const b of g.bars) {
      if (b.caption) {
        root.append(svg("text", { x: LABEL_W, y: y + BAR_H - 3, class: "caption" }, b.name));
        y += BAR_H + GAP;
        continue;
      }
      const name = svg("text", { x: LABEL_W - 6, y: y + BAR_H - 3, "text-anchor": "end", class: b.historical ? "name historical" : "name" }, fit(b.name));
      if (fit(b.name) !== b.name) name.append(svg("title", {}, b.name));
      root.append(name);
      if (b.ns !== undefined && b.ns > 0) {
        const w = Math.max(2, x(b.ns) - LABEL_W);
        const rect = svg("rect", { x: LABEL_W, y, width: w, height: BAR_H, rx: 2, fill: b.color, class: b.historical ? "bar historical" : "bar" });
        rect.append(svg("title", {}, `${b.name}: ${duration(b.ns)}`));
        root.append(rect);
        root.append(svg("text", { x: LABEL_W + w + 4, y: y + BAR_H - 3, class: "value" }, duration(b.ns)));
      } else {
        root.append(svg("text", { x: LABEL_W + 4, y: y + BAR_H - 3, class: b.below ? "value" : "failure" }, b.text ?? ""));
      }
      y += BAR_H + GAP;
    }
    y += GROUP_GAP - GAP;
  }
  host.replaceChildren(root);
}
