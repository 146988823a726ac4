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

/** One worker process's measurement of a cell (measure.Execution). */
export interface Execution {
  /** The execution's median, in ns per call, and its interval over its own samples. */
  median_ns: number;
  ci?: Interval;
  /** Its fastest and slowest samples. */
  min_ns?: number;
  max_ns?: number;
  /** The samples it took and the calls in each. */
  runs?: number;
  calls?: number;
  /** The hypervisor's steal and other processes' CPU during its samples, in cores on
   * average; the one-minute load average at their end. */
  steal?: number;
  load1?: number;
  other_cpu?: number;
  busy?: boolean;
}

/** A ratio of two cells' times with its 95% interval (level 0: none) and what a geometric
 * mean of ratios needs: log of x, the variance of that estimate, its degrees of freedom
 * (measure.Ratio). */
export interface Ratio {
  x: number;
  lo: number;
  hi: number;
  level: number;
  log: number;
  var: number;
  df: number;
}

const NO_RATIO: Ratio = { x: 0, lo: 0, hi: 0, level: 0, log: 0, var: 0, df: 0 };

/** The coefficients of Lanczos's approximation of Γ (g = 7, n = 9). */
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
  -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
  1.5056327351493116e-7,
];

/** ln Γ(x) for x > 0 (measure takes Go's math.Lgamma: the two agree to about 15 digits). */
function lgamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lgamma(1 - x);
  x--;
  let a = LANCZOS[0]!;
  const t = x + 7.5;
  for (let i = 1; i < LANCZOS.length; i++) a += LANCZOS[i]! / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let f = d;
  for (let m = 1; m <= 300; m++) {
    let num = (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m));
    d = 1 + num * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + num / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    f *= d * c;
    num = (-(a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 + num * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + num / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    f *= step;
    if (Math.abs(step - 1) < 1e-15) break;
  }
  return f;
}

/** The regularized incomplete beta function I_x(a, b) (go-moremath's mathx.BetaInc, which measure calls). */
function betaInc(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  if (x < (a + 1) / (a + b + 2)) return (front * betaFraction(x, a, b)) / a;
  return 1 - (front * betaFraction(1 - x, b, a)) / b;
}

function tCDF(t: number, df: number): number {
  return 1 - 0.5 * betaInc(df / (df + t * t), df / 2, 0.5);
}

/** tQuantile is the p quantile (0.5 ≤ p < 1) of Student's t with df degrees of freedom, by
 * bisection of its distribution function, step for step as measure.TQuantile. */
export function tQuantile(p: number, df: number): number {
  if (!(df > 0) || !(p >= 0.5) || p >= 1) return NaN;
  let hi = 1;
  while (tCDF(hi, df) < p && hi < 1e12) hi *= 2;
  let lo = 0;
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if (mid === lo || mid === hi) break;
    if (tCDF(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** The mean and sample variance of the logs of the executions' medians; undefined when
 * one is not positive. */
function logMoments(execs: Execution[]): { mean: number; variance: number } | undefined {
  let mean = 0;
  for (const e of execs) {
    if (!(e.median_ns > 0) || !Number.isFinite(e.median_ns)) return undefined;
    mean += Math.log(e.median_ns);
  }
  const n = execs.length;
  mean /= n;
  if (n < 2) return { mean, variance: 0 };
  let variance = 0;
  for (const e of execs) {
    const d = Math.log(e.median_ns) - mean;
    variance += d * d;
  }
  return { mean, variance: variance / (n - 1) };
}

/** acrossExecutions is a cell's figure and its 95% interval over its executions
 * (measure.AcrossExecutions): the geometric mean of their medians with Student's t interval
 * on the logs; one execution keeps its own median and interval. */
export function acrossExecutions(execs: Execution[]): { median_ns: number; ci?: Interval } {
  if (execs.length === 0) return { median_ns: 0 };
  if (execs.length === 1) {
    const e = execs[0]!;
    return e.ci && (e.ci.level ?? 0) > 0 ? { median_ns: e.median_ns, ci: e.ci } : { median_ns: e.median_ns };
  }
  const m = logMoments(execs);
  if (!m) return { median_ns: 0 };
  const n = execs.length;
  const half = tQuantile(1 - (1 - CONFIDENCE) / 2, n - 1) * Math.sqrt(m.variance / n);
  return {
    median_ns: Math.exp(m.mean),
    ci: { lo_ns: Math.exp(m.mean - half), hi_ns: Math.exp(m.mean + half), level: CONFIDENCE },
  };
}

function withInterval(r: Ratio): Ratio {
  const half = tQuantile(1 - (1 - CONFIDENCE) / 2, r.df) * Math.sqrt(r.var);
  return { ...r, lo: Math.exp(r.log - half), hi: Math.exp(r.log + half), level: CONFIDENCE };
}

/** ratioOf is a's time over b's from their executions (measure.RatioOf): exp of the
 * difference of mean logs, with Welch's t interval; an interval needs two executions on
 * each side. */
export function ratioOf(a: Execution[], b: Execution[]): Ratio {
  const ma = logMoments(a);
  const mb = logMoments(b);
  if (!ma || !mb || a.length === 0 || b.length === 0) return { ...NO_RATIO };
  const log = ma.mean - mb.mean;
  const r: Ratio = { ...NO_RATIO, x: Math.exp(log), log };
  if (a.length < 2 || b.length < 2) return r;
  const sa = ma.variance / a.length;
  const sb = mb.variance / b.length;
  r.var = sa + sb;
  r.df = r.var > 0 ? (r.var * r.var) / ((sa * sa) / (a.length - 1) + (sb * sb) / (b.length - 1)) : a.length + b.length - 2;
  return withInterval(r);
}

/** geoMean is the geometric mean of ratios with its 95% interval (measure.GeoMean): one
 * engine's × native over the kernels run, as JetStream scores. */
export function geoMean(rs: Ratio[]): Ratio {
  if (rs.length === 0) return { ...NO_RATIO };
  let log = 0;
  let v = 0;
  let dfDen = 0;
  let all = true;
  for (const r of rs) {
    if (!(r.x > 0)) return { ...NO_RATIO };
    log += r.log;
    v += r.var;
    all = all && r.level > 0;
    if (r.var > 0) dfDen += (r.var * r.var) / r.df;
  }
  const n = rs.length;
  log /= n;
  const g: Ratio = { ...NO_RATIO, x: Math.exp(log), log };
  if (!all) return g;
  g.df = dfDen > 0 ? (v * v) / dfDen : rs.reduce((s, r) => s + r.df, 0);
  g.var = v / (n * n);
  return withInterval(g);
}

/** The verdicts of a ratio (measure.Verdict*). */
export type Verdict = "slower" | "faster" | "no clear difference";

/** verdict says what a/b supports (measure.Ratio.Verdict): "slower" when its whole interval
 * is above 1, "faster" below, "no clear difference" when it spans 1 or has none. */
export function verdict(r: Ratio): Verdict {
  if (!(r.level > 0)) return "no clear difference";
  if (r.lo > 1) return "slower";
  if (r.hi < 1) return "faster";
  return "no clear difference";
}

/** own is the range of an execution's samples processSpread compares: its interval, else its
 * min–max (measure.Execution's own). */
function own(e: Execution): [number, number] | undefined {
  if (e.ci && (e.ci.level ?? 0) > 0) return [e.ci.lo_ns, e.ci.hi_ns];
  if ((e.max_ns ?? 0) > 0) return [e.min_ns ?? 0, e.max_ns!];
  return undefined;
}

/** processSpread is how far a cell's executions spread, largest median over smallest, and
 * whether it dominates: two executions' own ranges (interval, else min–max) are disjoint
 * (measure.ProcessSpread). */
export function processSpread(execs: Execution[]): { x: number; dominates: boolean } {
  if (execs.length < 2) return { x: 0, dominates: false };
  let lo = Infinity;
  let hi = 0;
  for (const e of execs) {
    lo = Math.min(lo, e.median_ns);
    hi = Math.max(hi, e.median_ns);
  }
  if (!(lo > 0)) return { x: 0, dominates: false };
  let dominates = false;
  for (let i = 0; i < execs.length; i++) {
    for (let j = i + 1; j < execs.length; j++) {
      const a = own(execs[i]!);
      const b = own(execs[j]!);
      if (a && b && (a[1] < b[0] || b[1] < a[0])) dominates = true;
    }
  }
  return { x: hi / lo, dominates };
}

/** executionsOf is a cell's executions (measure.Result.ExecutionsOf): its executions, or for a
 * cell measured in one process (a browser cell, an older stored run) one made of its median
 * and interval; none for a failed cell or one without a median. */
export function executionsOf(cell: {
  median_ns: number;
  ci?: Interval;
  runs?: number;
  calls?: number;
  failure?: string;
  executions?: Execution[];
}): Execution[] {
  if (cell.failure || !(cell.median_ns > 0)) return [];
  if (cell.executions && cell.executions.length > 0) return cell.executions;
  return [{ median_ns: cell.median_ns, ci: cell.ci, runs: cell.runs, calls: cell.calls }];
}

/** The engines a row's × is taken against, in order, when the reader chose none or the
 * chosen one has no time (report.Baselines). */
export const BASELINES = ["native", "browser-wasm"] as const;

/** baseline is the one rule for the engine a row's ratios are taken against
 * (report.Baseline): prefer when it has a time in the row, else the first of BASELINES that
 * has one; undefined for none. */
export function baseline(prefer: string | undefined, timed: (engine: string) => boolean): string | undefined {
  if (prefer && timed(prefer)) return prefer;
  return BASELINES.find((b) => timed(b));
}

/** baseRatio is a cell's time over its row's baseline's with the interval from both cells'
 * executions (report.BaseRatio); undefined when no ratio is written: the cell is the
 * baseline, or either has no time. */
export function baseRatio(
  cell: Parameters<typeof executionsOf>[0] & { engine: string },
  base: Parameters<typeof executionsOf>[0] & { engine: string },
): Ratio | undefined {
  if (cell.engine === base.engine) return undefined;
  const r = ratioOf(executionsOf(cell), executionsOf(base));
  return r.x > 0 ? r : undefined;
}
