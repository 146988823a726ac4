// The details of one number: how it was made (the method) and where (the environment).

import type { CellState } from "./cells";
import { codeLinks } from "./code-view";
import { info } from "./engines";
import { duration, grouped, label } from "./format";
import type { Grid } from "./results";
import { spread, wide } from "./stats";
import { el } from "./dom";

function dl(pairs: [string, string | Node][]): HTMLDListElement {
  const d = document.createElement("dl");
  for (const [k, v] of pairs) {
    const dt = el("dt", undefined, k);
    const dd = document.createElement("dd");
    if (typeof v === "string") dd.textContent = v;
    else dd.append(v);
    d.append(dt, dd);
  }
  return d;
}

/** showDetails fills the dialog with the cell's method and environment and opens it. */
export function showDetails(dialog: HTMLDialogElement, grid: Grid, r: number, engine: string): void {
  const s: CellState = grid.get(r, engine);
  const body = dialog.querySelector<HTMLElement>(".dialog-body");
  if (!body || s.kind !== "done") return;
  const res = s.result;
  const row = grid.rows[r];
  const parts: Node[] = [el("h2", undefined, `${label(res.kernel, res.args)} on ${info(engine).title}`), el("p", undefined, info(engine).what)];

  const method: [string, string][] = [];
  const calls = res.calls ?? 1;
  // A cell that failed before its samples has no k to speak of.
  const sample = !(calls > 0)
    ? `timed samples of k calls each (k grown until a sample lasts at least ${duration(res.min_sample_ns ?? 10e6)}); this cell ended before them`
    : res.min_sample_ns === 0
      ? `${res.runs} timed samples of one call each (no sample minimum)`
      : `${res.runs} timed samples of k = ${grouped(String(calls))} call${calls === 1 ? "" : "s"} each ` +
        `(k grown, as Go's testing.B grows b.N, until a sample lasts at least ${duration(res.min_sample_ns ?? 10e6)}; a call that long stays at k = 1; ` +
        "grown again, the samples started over, if one lasts under half of it), " +
        "each sample's time divided by k";
  const warmup =
    res.warmup > 0 && res.warmed_up_ns
      ? `an untimed warm-up of ${res.warmup} call(s) and more until it lasted ${duration(res.warmed_up_ns)} (a fresh process runs its first hundreds of milliseconds slower)`
      : `${res.warmup} untimed warm-up call(s)`;
  if (res.where === "server") {
    method.push(
      ["how", `in a worker process of the server (killable: a crash or a time limit ends only it), the first call timed alone, ${warmup}, then ${sample}; Go's monotonic clock around each sample only`],
      ["every call", row?.kernel.group === "custom" ? "its value compared with the row's other tiers'" : "checked: the first value of each sample against the catalogue, the sum of all against k × the expected value"],
    );
  } else {
    method.push(
      ["how", `in a fresh Web Worker: load, the first call timed alone, ${warmup}, then ${sample}; performance.now() around each sample only`],
      ["every call", row?.kernel.group === "custom" ? "its value compared with the row's other tiers'" : "its value compared with the catalogue's"],
    );
  }
  method.push([
    "headline",
    "the median time per call of the samples, with its 95% confidence interval (order statistics: the samples whose ranks a binomial(n, ½) distribution places around the median with ≥ 95% probability, as benchstat computes it; 6 samples needed); min and max beside it",
  ]);
  if (res.failure) {
    method.push(["outcome", res.failure]);
    if (res.failure === "stack overflow" && res.where === "browser") {
      method.push([
        "why",
        "a Web Worker's stack is smaller than the page's main thread's (in Chromium about half: some 9,000 frames of a small " +
          "function against 17,000), and ack(3, m) recurses about 2^(m+3) calls deep; the kernels run in workers so that the page never freezes",
      ]);
    }
  }
  else {
    method.push(["median", `${duration(res.median_ns)} per call (k = ${grouped(String(calls))})`]);
    method.push([
      "95% interval",
      res.ci
        ? `${duration(res.ci.lo_ns)} – ${duration(res.ci.hi_ns)} (${spread(res.median_ns, res.ci)}${res.ci.level ? `, ${(res.ci.level * 100).toFixed(1)}% exactly` : ""})` +
          (wide(res.median_ns, res.ci) ? " — wider than ±5% of the median: read this time with care" : "")
        : `none: ${res.samples_ns.length} samples, a 95% interval needs 6`,
    ]);
    method.push(["min – max", `${duration(res.min_ns)} – ${duration(res.max_ns)}`]);
    if (res.samples_ns.length) method.push(["samples", res.samples_ns.map(duration).join(", ")]);
    if (res.first_ns !== undefined) method.push(["first call", `${duration(res.first_ns)}, alone, before any warm-up (the engine's cold start; the median is the steady state)`]);
    const x = grid.ratio(r, engine);
    const base = grid.baseline(r);
    if (x !== undefined && base) method.push(["ratio", `×${x.toFixed(3)}: this median over ${info(base).title}'s, from this same run on this machine`]);
  }
  // A user's kernel has no catalogue value: its tiers are checked against each other.
  const custom = row?.kernel.group === "custom";
  method.push(["value", res.value ? grouped(res.value) : "—"]);
  if (!custom) method.push(["expected", grouped(res.expected)]);
  if (res.value && !custom) method.push(["check", res.value === res.expected ? "equal to the catalogue's (compared as exact decimal strings)" : "DIFFERENT from the catalogue's"]);
  method.push(["setup", `compile ${duration(res.setup.compile_ns)}, instantiate ${duration(res.setup.instantiate_ns)}${res.setup.cached ? " (compiled code from the cache)" : ""} — not in the times`]);
  if (res.note) method.push(["note", res.note]);
  if (row) method.push(["kernel", `${row.kernel.summary} — from “${row.kernel.article}”`]);
  parts.push(codeLinks(grid, r, engine), el("h3", undefined, "Method"), dl(method));

  const env: [string, string][] = [];
  if (res.server) {
    const e = res.server;
    env.push(["CPU", e.cpu], ["cores", `${e.cores} (GOMAXPROCS ${e.gomaxprocs})`], ["Go", `${e.go} ${e.os}/${e.arch}`]);
    for (const [k, v] of Object.entries(e.modules ?? {})) env.push([k, v]);
    for (const r of e.runtimes ?? []) env.push([`${r.engine} runtime`, r.version]);
  }
  if (res.browser) {
    const b = res.browser;
    env.push(
      ["browser", b.user_agent],
      ["cores", String(b.cores)],
      ["cross-origin isolated", b.cross_origin_isolated ? "yes (COOP + COEP: full timer precision)" : "no (coarse timers)"],
      ["timer step", b.timer_resolution_ns ? duration(b.timer_resolution_ns) : "unknown"],
    );
  }
  if (res.noise) {
    const n = res.noise;
    env.push([
      "machine during the samples",
      `load average ${n.load1.toFixed(2)} on ${n.cores} cores; other processes took ${n.other_cpu.toFixed(2)} cores on average` +
        (n.busy ? " — a busy machine: this time may be slower and more spread than on a quiet one" : ""),
    ]);
    if (n.faults_per_call !== undefined) {
      env.push([
        "page faults",
        `${n.faults_per_call < 10 ? n.faults_per_call.toFixed(2) : Math.round(n.faults_per_call)} per call in the worker ` +
          "(memory touched for the first time, or again after the runtime gave it back: each a trap and a zeroed page)",
      ]);
    }
  }
  parts.push(el("h3", undefined, "Environment"), dl(env));
  body.replaceChildren(...parts);
  dialog.showModal();
}
