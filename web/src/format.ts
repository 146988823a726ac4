// Number formatting for cells, the chart and Markdown.

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
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1).replace(/\.0$/, "");
  return v.toFixed(2).replace(/\.?0+$/, "");
}

/** A ratio as "×2.4" (or "×0.61"). */
export function ratio(r: number): string {
  if (!Number.isFinite(r) || r <= 0) return "";
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
