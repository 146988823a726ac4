// Statistics of a cell's samples: the median and its confidence interval, computed as the
// server computes them (package measure, with benchstat's golang.org/x/perf/benchmath), so
// that the page's cells and the CLI's read alike.

/** A confidence interval of a median, in ns per call; level is its confidence. */
export interface Interval {
  lo_ns: number;
  hi_ns: number;
  level?: number;
}

/** median of sorted values, as benchstat takes it (the R8 quantile, which for the median is
 * the middle value or the mean of the middle two). */
export function median(sorted: number[]): number {
  const n = sorted.length;
  if (n === 0) return 0;
  const mid = n >> 1;
  return n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** binomialPMF(n) is the probability of each k successes in n fair trials. */
function binomialPMF(n: number): number[] {
  const p: number[] = [];
  let c = 1; // C(n, k)
  for (let k = 0; k <= n; k++) {
    p.push(c / 2 ** n);
    c = (c * (n - k)) / (k + 1);
  }
  return p;
}

/** The level medianCI asks for. */
export const CONFIDENCE = 0.95;

/** medianCI returns the order-statistics confidence interval of the median of sorted
 * values: the gaps between samples the population median falls in, by the binomial(n, ½)
 * distribution, gathered from the middle out (left first on ties) until they hold 95%,
 * as go-moremath's stats.QuantileCI does exactly (benchstat, up to 30 samples: past that
 * it approximates with the normal distribution). Undefined when the interval would reach
 * past the samples (fewer than 6). */
export function medianCI(sorted: number[], confidence = CONFIDENCE): Interval | undefined {
  const n = sorted.length;
  if (n < 2) return undefined;
  const pmf = binomialPMF(n);
  const at = (k: number): number => (k >= 0 && k <= n ? pmf[k]! : 0);
  const x = Math.ceil((n + 1) * 0.5) - 1;
  let accum = at(x);
  let l = x;
  let r = x + 1;
  let lp = at(l - 1);
  let rp = at(r);
  while (accum < confidence && (lp > 0 || rp > 0)) {
    if (lp >= rp) {
      accum += lp;
      l--;
      lp = at(l - 1);
    } else {
      accum += rp;
      r++;
      rp = at(r);
    }
  }
  if (l < 1 || r - 1 >= n) return undefined;
  return { lo_ns: sorted[l - 1]!, hi_ns: sorted[r - 1]!, level: accum };
}

/** How far an interval may reach from its median, as a fraction, before it is "wide". */
export const WIDE_LIMIT = 0.05;

/**
 * wide reports whether an interval reaches past ±5% of its median (measure.Result.Wide). A
 * cell without an interval (under 6 samples) is not wide: its "±?" says the spread is unknown.
 */
export function wide(med: number, ci: Interval | undefined): boolean {
  if (!ci || !(med > 0)) return false;
  return ci.lo_ns < med * (1 - WIDE_LIMIT) || ci.hi_ns > med * (1 + WIDE_LIMIT);
}

/** spread renders an interval as its half-width in percent of the median: "±0.8%". */
export function spread(med: number, ci: Interval | undefined): string {
  if (!ci || !(med > 0)) return "±?";
  const half = (Math.max(med - ci.lo_ns, ci.hi_ns - med) / med) * 100;
  return `±${half < 10 ? half.toFixed(1) : half.toFixed(0)}%`;
}
