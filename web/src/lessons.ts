// The lessons, today: the source articles answered in sentences ("HHVM runs recursive
// function calls 20 times faster than PHP … 3 times slower than Java … 5 times slower than
// C"); this Run answers the same way, each sentence written from its cells' ratio and that
// ratio's interval (stats.ratioOf over the cells' executions; for a cell of one process, the
// ends of the two cells' own intervals, said so), only where the interval says which is faster,
// beside the article's own figure where the article measured the pair.
// And the summary per engine: the geometric mean of its × over the kernels run, with its
// interval, as JetStream gives one score.

import { info } from "./engines";
import { ratio, ratioInterval } from "./format";
import type { HistoryRow } from "./history";
import type { Grid, Row } from "./results";
import { executionsOf, geoMean, type Ratio, ratioOf, verdict } from "./stats";
import type { CellResult } from "./types";
import { el } from "./dom";

/**
 * The article's pairs: two engines of today and the article's columns they stand for, on
 * its fib_rec(40) table. HHVM, PHP's JIT of 2015, is the article's subject: PHP's own JIT
 * stands for it today.
 */
const ARTICLE_PAIRS: { a: string; b: string; thenA: string; thenB: string }[] = [
  { a: "php-jit", b: "php", thenA: "HHVM", thenB: "PHP 5" },
  { a: "php-jit", b: "java", thenA: "HHVM", thenB: "Java" },
  { a: "php-jit", b: "c", thenA: "HHVM", thenB: "C (" },
  { a: "php-jit", b: "node-js", thenA: "HHVM", thenB: "node.js" },
];

/** One sentence: its text, and whether the cells support it (else it says why not). */
export interface Lesson {
  text: string;
  /** The engines and kernel it reads, for the page's tests and marks. */
  engine: string;
  against: string;
  kernel: string;
  /** false: a busy machine, cells short of their runs, no interval or one spanning 1. */
  supported: boolean;
}

/** what names what a kernel's row measures, as the articles put it. */
function what(row: Row): string {
  const k = row.kernel;
  if (k.group === "recursion") return /_it$|_while$/.test(k.name) ? `iteration (${row.label})` : `recursive calls (${row.label})`;
  if (k.group === "loops") return `loops over arrays (${row.label})`;
  return row.label;
}

/** times writes a ratio as a sentence says it: "3.1× slower", "2.3× faster". */
function times(r: Ratio): string {
  const slower = r.x >= 1;
  const x = slower ? r.x : 1 / r.x;
  return `${ratio(x).slice(1)}× ${slower ? "slower" : "faster"}`;
}

/** interval writes a ratio's interval in the sentence's direction, with how it was
 * taken when not across processes: "(×2.9–3.3)", "(×2.9–3.3, from the two cells' own
 * intervals)". */
function interval(r: Ratio, how: string): string {
  if (!(r.level > 0)) return "";
  const flipped = r.x < 1 ? { lo: 1 / r.hi, hi: 1 / r.lo, level: r.level } : r;
  return ` (×${ratioInterval(flipped)}${how})`;
}

/**
 * pairRatio is a's time over b's with an interval: from both cells' processes
 * (stats.ratioOf) when each ran in two or more; else, for cells measured in one process (a
 * browser's worker, a server before several processes), from the ends of the cells' own
 * 95% intervals (a's low over b's high to a's high over b's low), which holds the ratio
 * whenever both intervals hold their medians (at least 90% of the time), but says nothing
 * of how processes differ: within is true then, and the sentence says so.
 */
function pairRatio(a: CellResult, b: CellResult): { r: Ratio; within: boolean } {
  const r = ratioOf(executionsOf(a), executionsOf(b));
  if (r.level > 0 || !(r.x > 0) || !a.ci || !b.ci || !(b.ci.lo_ns > 0)) return { r, within: false };
  return { r: { ...r, lo: a.ci.lo_ns / b.ci.hi_ns, hi: a.ci.hi_ns / b.ci.lo_ns, level: 0.9 }, within: true };
}

/** caveat says why a pair of cells cannot be read as a lesson, or "" when it can. */
function caveat(cells: CellResult[], requested: number): string {
  if (cells.some((c) => c.noise?.busy || c.executions?.some((e) => e.busy))) return "measured on a busy machine";
  const short = cells.find((c) => requested > 0 && c.runs < requested);
  if (short) return `${info(short.engine).title} fit ${short.runs} of ${requested} runs in the time limit`;
  return "";
}

/** sentence reads engine a against b on one row: a lesson, or what keeps it from being one. */
function sentence(grid: Grid, r: number, a: string, b: string, claim: string): Lesson | undefined {
  const ca = grid.result(r, a);
  const cb = grid.result(r, b);
  if (!ca || !cb) return undefined;
  const row = grid.rows[r]!;
  const { r: x, within } = pairRatio(ca, cb);
  if (!(x.x > 0)) return undefined;
  const how = within ? ", from the two cells' own intervals" : "";
  const A = info(a).title;
  const B = info(b).title;
  const base = { engine: a, against: b, kernel: row.kernel.name };
  const why = caveat([ca, cb], grid.requestedRuns);
  if (why) return { ...base, supported: false, text: `${A} against ${B} on ${what(row)}: ${ratio(x.x)}, not read as a lesson (${why}).${claim}` };
  if (!(x.level > 0)) return { ...base, supported: false, text: `${A} against ${B} on ${what(row)}: ${ratio(x.x)}, with no interval (under 6 samples), so no lesson.${claim}` };
  const v = verdict(x);
  if (v === "no clear difference") return { ...base, supported: false, text: `${A} and ${B} run ${what(row)} with no clear difference${interval(x, how)}.${claim}` };
  return { ...base, supported: true, text: `${A} runs ${what(row)} ${times(x)} than ${B}${interval(x, how)}.${claim}` };
}

/** claimOf is the article's figure for a pair, from its fib_rec(40) row: " The article
 * (2015): HHVM 26× faster than PHP 5." */
function claimOf(history: HistoryRow[] | undefined, thenA: string, thenB: string): string {
  const row = history?.find((h) => h.kernel === "fib_rec" && h.figures.some((f) => f.runtime.startsWith(thenA)));
  const fa = row?.figures.find((f) => f.runtime.startsWith(thenA) && f.seconds > 0);
  const fb = row?.figures.find((f) => f.runtime.startsWith(thenB) && f.seconds > 0);
  if (!row || !fa || !fb) return "";
  const x = fa.seconds / fb.seconds;
  const said = x >= 1 ? `${ratio(x).slice(1)}× slower` : `${ratio(1 / x).slice(1)}× faster`;
  return ` The article: ${fa.runtime} ${said} than ${fb.runtime} on ${row.label} (${row.source}).`;
}

/**
 * lessons writes this grid's sentences: the article's pairs first, where both engines ran
 * fib_rec, then each engine against its row's baseline on one kernel (the first recursive
 * one it ran, else its first), so that a reader takes one sentence per engine away.
 */
export function lessons(grid: Grid, history: HistoryRow[] | undefined): Lesson[] {
  const out: Lesson[] = [];
  const fibRec = grid.rows.findIndex((r) => r.kernel.name === "fib_rec");
  if (fibRec >= 0) {
    for (const p of ARTICLE_PAIRS) {
      const l = sentence(grid, fibRec, p.a, p.b, claimOf(history, p.thenA, p.thenB));
      if (l) out.push(l);
    }
  }
  const order = grid.rows.map((_, r) => r).sort((x, y) => Number(grid.rows[y]!.kernel.name === "fib_rec") - Number(grid.rows[x]!.kernel.name === "fib_rec"));
  for (const e of grid.engines) {
    for (const r of order) {
      const base = grid.baseline(r);
      if (!base || base === e) continue;
      const l = sentence(grid, r, e, base, "");
      if (l) {
        out.push(l);
        break;
      }
    }
  }
  return out;
}

/** summary is each engine's geometric mean of × over the rows where it has one (with the
 * rows it covers), as JetStream scores; the baseline's own rows count as ×1. */
export function summary(grid: Grid): Map<string, { r: Ratio; rows: number }> {
  const out = new Map<string, { r: Ratio; rows: number }>();
  for (const e of grid.engines) {
    const rs: Ratio[] = [];
    for (let r = 0; r < grid.rows.length; r++) {
      const x = grid.ratioWithInterval(r, e);
      if (x) rs.push(x);
    }
    if (rs.length > 0) out.set(e, { r: geoMean(rs), rows: rs.length });
  }
  return out;
}

/** renderLessons writes the sentences into host, the supported first; host is hidden when
 * there is none. */
export function renderLessons(host: HTMLElement, grid: Grid, history: HistoryRow[] | undefined): void {
  const all = lessons(grid, history);
  host.hidden = all.length === 0;
  if (all.length === 0) {
    host.replaceChildren();
    return;
  }
  const list = document.createElement("ul");
  for (const l of [...all.filter((l) => l.supported), ...all.filter((l) => !l.supported)]) {
    const li = el("li", undefined, l.text);
    li.dataset.engine = l.engine;
    li.dataset.against = l.against;
    li.dataset.kernel = l.kernel;
    if (!l.supported) li.className = "muted";
    list.append(li);
  }
  const head = el("h3", undefined, "The lessons, today");
  host.replaceChildren(head, list);
}
