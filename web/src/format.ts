// Number formatting for cells, the chart and Markdown.

import type { Interval } from "./stats";

/** A duration in ns as people read it: "812 ns", "4.56 µs", "7.89 ms", "1.23 s". */
export function duration(ns: number): string {
  if (!Number.isFinite(ns)) return "—";
  if (ns < 1_000) return `${sig(ns)} ns`;
  if (ns < 1_000_000) return `${sig(ns / 1_000)} µs`;
  if (ns < 1_000_000_000) return `${sig(ns / 1_000_000)} ms`;
  return `${sig(ns / 1_000_000_000)} s`;
}

/** Three significant digits, without a trailing ".0". */
export function sig(v: number): string {
  if (v >= 1e5) return expo(v);
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1).replace(/\.0$/, "");
  return v.toFixed(2).replace(/\.?0+$/, "");
}

/** A figure of 100,000 or more with three significant digits and its power of ten, as
 * report's exponent: 6.037e21 → "6.04e21", 100000 → "1e5". */
export function expo(v: number): string {
  const [m = "", e = ""] = v.toExponential(2).split("e");
  return `${m.replace(/\.?0+$/, "")}e${e.replace(/^\+/, "")}`;
}

/** A ratio as "×2.4" (or "×0.61"). */
export function ratio(r: number): string {
  if (!Number.isFinite(r) || r <= 0) return "";
  if (r >= 1e5) return `×${expo(r)}`;
  if (r >= 100) return `×${r.toFixed(0)}`;
  if (r >= 10) return `×${r.toFixed(1)}`;
  return `×${r.toFixed(2)}`;
}

/** ratioInterval is a ratio's 95% interval as report.FormatRatioInterval writes it:
 * "2.90–3.20", each end as ratio writes it without its ×; "" for a ratio without one. */
export function ratioInterval(r: { lo: number; hi: number; level: number }): string {
  if (!(r.level > 0)) return "";
  return `${ratio(r.lo).replace(/^×/, "")}–${ratio(r.hi).replace(/^×/, "")}`;
}

/** A kernel call as the articles write it: "fib_rec(40)". */
export function label(kernel: string, args: number[]): string {
  return `${kernel}(${args.join(", ")})`;
}

/** Decimal digits grouped for reading: 7540113804746346429 → "7 540 113 804 746 346 429". */
export function grouped(decimal: string): string {
  const neg = decimal.startsWith("-");
  const digits = neg ? decimal.slice(1) : decimal;
  const out = digits.replace(/\B(?=(\d{3})+(?!\d))/g, "\u202f");
  return neg ? `-${out}` : out;
}

/** span writes two durations as one range: "1.2–3.4 ms", "812 ns–1.3 µs". */
export function span(lo: number, hi: number): string {
  const a = duration(lo);
  const b = duration(hi);
  const unit = (t: string): string => t.slice(t.lastIndexOf(" "));
  return unit(a) === unit(b) ? `${a.slice(0, a.lastIndexOf(" "))}–${b}` : `${a}–${b}`;
}

/**
 * interval writes a median's 95% interval as a cell shows it: its half-width (half, as
 * stats.spread writes it: "±2.1%") when it reaches about as far on both sides and less than
 * the median itself, else its ends ("1.2–3.4 ms"): a lopsided or a huge interval is not a ±
 * of anything.
 */
export function interval(med: number, ci: Interval | undefined, half: string): string {
  if (!ci || !(med > 0)) return half;
  const below = med - ci.lo_ns;
  const above = ci.hi_ns - med;
  const far = Math.max(below, above);
  const lopsided = far > 0.05 * med && far > 2 * Math.min(below, above);
  return far < med && !lopsided ? half : span(ci.lo_ns, ci.hi_ns);
}
