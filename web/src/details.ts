// The details of one number: how it was made (the method) and where (the environment).

import type { CellState } from "./cells";
import { info } from "./engines";
import { duration, grouped, label } from "./format";
import type { Grid } from "./results";

function dl(pairs: [string, string | Node][]): HTMLDListElement {
  const d = document.createElement("dl");
  for (const [k, v] of pairs) {
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    if (typeof v === "string") dd.textContent = v;
    else dd.append(v);
    d.append(dt, dd);
  }
  return d;
}

function h(tag: "h2" | "h3" | "p", text: string): HTMLElement {
  const e = document.createElement(tag);
  e.textContent = text;
  return e;
}

/** showDetails fills the dialog with the cell's method and environment and opens it. */
export function showDetails(dialog: HTMLDialogElement, grid: Grid, r: number, engine: string): void {
  const s: CellState = grid.get(r, engine);
  const body = dialog.querySelector<HTMLElement>(".dialog-body");
  if (!body || s.kind !== "done") return;
  const res = s.result;
  const row = grid.rows[r];
  const parts: Node[] = [h("h2", `${label(res.kernel, res.args)} on ${info(engine).title}`), h("p", info(engine).what)];

  const method: [string, string][] = [];
  if (res.where === "server") {
    method.push(
      ["how", `in a worker process of the server (killable: a crash or a time limit ends only it), ${res.warmup} untimed warm-up call(s), then ${res.runs} timed calls; Go's monotonic clock around the call only`],
    );
  } else {
    method.push(
      ["how", `in a fresh Web Worker: load, one first call timed apart, ${res.warmup} untimed warm-up call(s), then ${res.runs} timed calls; performance.now() around the call only`],
    );
  }
  method.push(["headline", "the median of the timed calls; min and max beside it"]);
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
    method.push(["median", duration(res.median_ns)], ["min – max", `${duration(res.min_ns)} – ${duration(res.max_ns)}`]);
    if (res.samples_ns.length) method.push(["samples", res.samples_ns.map(duration).join(", ")]);
    if (res.first_ns !== undefined) method.push(["first call", `${duration(res.first_ns)} (before the engine tiered the code up)`]);
    const x = grid.ratio(r, engine);
    const base = grid.baseline(r);
    if (x !== undefined && base) method.push(["ratio", `×${x.toFixed(3)}: this median over ${info(base).title}'s, from this same run on this machine`]);
  }
  method.push(["value", res.value ? grouped(res.value) : "—"], ["expected", grouped(res.expected)]);
  if (res.value) method.push(["check", res.value === res.expected ? "equal to the catalogue's (compared as exact decimal strings)" : "DIFFERENT from the catalogue's"]);
  method.push(["setup", `compile ${duration(res.setup.compile_ns)}, instantiate ${duration(res.setup.instantiate_ns)}${res.setup.cached ? " (compiled code from the cache)" : ""} — not in the times`]);
  if (res.note) method.push(["note", res.note]);
  if (row) method.push(["kernel", `${row.kernel.summary} — from “${row.kernel.article}”`]);
  parts.push(h("h3", "Method"), dl(method));

  const env: [string, string][] = [];
  if (res.server) {
    const e = res.server;
    env.push(["CPU", e.cpu], ["cores", `${e.cores} (GOMAXPROCS ${e.gomaxprocs})`], ["Go", `${e.go} ${e.os}/${e.arch}`]);
    for (const [k, v] of Object.entries(e.modules ?? {})) env.push([k, v]);
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
  parts.push(h("h3", "Environment"), dl(env));
  body.replaceChildren(...parts);
  dialog.showModal();
}
