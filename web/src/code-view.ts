// The Code view: why a cell's number is what it is. For one kernel call, one to four tiers'
// code of the kernel's hot function (GET /api/explain: machine code decoded by one
// disassembler, the wasm, the Go source), side by side and aligned at their loop heads (at
// their first recursive call in a recursive kernel), with each tier's instruction count, size and time per call
// above it. The view is a URL of its own: #code?kernel=K&<param>=<value>…&engines=A,B[&t.A=ns…].

import "./code-view.css";
import { failure } from "./api";
import { info } from "./engines";
import { duration, label } from "./format";
import type { Grid } from "./results";

/** One line of a listing, as the API answers it. */
interface CodeLine {
  offset: number;
  hex?: string;
  text: string;
  note?: string;
  call?: boolean;
  recursive?: boolean;
  back_edge?: boolean;
  loop_head?: boolean;
  data?: boolean;
  target: number;
  samples?: number;
}

/** One tier's code of the function. */
interface CodeListing {
  engine: string;
  tier: string;
  kind: string;
  function: string;
  from: string;
  bytes: number;
  instructions: number;
  calls: number;
  recursive_calls: number;
  back_edges: number;
  lines: CodeLine[];
  notes?: string[];
  profile?: { samples: number; in_function: number; refused?: string };
}

/** The answer of GET /api/explain for one engine. */
interface ExplainReport {
  label: string;
  engines: { engine: string; listings?: CodeListing[]; refused?: string }[];
}

/** The most tiers one comparison shows. */
const MAX_TIERS = 4;

/** What one view shows: a kernel call, its tiers and their measured times per call. */
export interface CodeRequest {
  kernel: string;
  params: [string, number][];
  engines: string[];
  /** Median time per call by engine, in ns, where the page measured it. */
  times: Record<string, number>;
  /** Whether each tier's run is sampled with perf (the heat column). */
  profile?: boolean;
}

/** codeHash is the URL fragment of a view. */
export function codeHash(req: CodeRequest): string {
  const q = new URLSearchParams({ kernel: req.kernel });
  for (const [k, v] of req.params) q.set(k, String(v));
  q.set("engines", req.engines.slice(0, MAX_TIERS).join(","));
  for (const e of req.engines) if (req.times[e] !== undefined) q.set(`t.${e}`, String(Math.round(req.times[e]!)));
  if (req.profile) q.set("profile", "1");
  return `#code?${q}`;
}

/** parseCodeHash reads a view's fragment; undefined when the fragment is not one. */
export function parseCodeHash(hash: string): CodeRequest | undefined {
  if (!hash.startsWith("#code?")) return undefined;
  const q = new URLSearchParams(hash.slice("#code?".length));
  const kernel = q.get("kernel");
  const engines = (q.get("engines") ?? "").split(",").filter((e) => e !== "");
  if (!kernel || engines.length === 0) return undefined;
  const params: [string, number][] = [];
  const times: Record<string, number> = {};
  for (const [k, v] of q) {
    if (k === "kernel" || k === "engines" || k === "profile") continue;
    const n = Number(v);
    if (!Number.isFinite(n)) continue;
    if (k.startsWith("t.")) times[k.slice(2)] = n;
    else params.push([k, n]);
  }
  return { kernel, params, engines: engines.slice(0, MAX_TIERS), times, profile: q.get("profile") === "1" };
}

/** codeLinks are the details dialog's way in: this cell's Code, and its comparison with
 * the other measured tiers of its row (the baseline first). */
export function codeLinks(grid: Grid, r: number, engine: string): HTMLElement {
  const row = grid.rows[r];
  const p = document.createElement("p");
  p.className = "code-links";
  if (!row) return p;
  const times: Record<string, number> = {};
  const measured: string[] = [];
  for (const e of grid.engines) {
    const s = grid.get(r, e);
    if (s.kind === "done" && !s.result.failure) {
      times[e] = s.result.median_ns;
      measured.push(e);
    }
  }
  const params: [string, number][] = row.kernel.params.map((prm, i) => [prm.name, row.args[i]!]);
  const base = grid.baseline(r);
  const others = [base, ...measured].filter((e): e is string => e !== undefined && e !== engine);
  const compare = [engine, ...new Set(others)].slice(0, 2);
  const one = document.createElement("a");
  one.className = "code-link";
  one.textContent = "Code";
  one.href = codeHash({ kernel: row.kernel.name, params, engines: [engine], times });
  p.append(one);
  if (compare.length > 1) {
    const two = document.createElement("a");
    two.className = "compare-code-link";
    two.textContent = `compare code with ${info(compare[1]!).title}`;
    two.href = codeHash({ kernel: row.kernel.name, params, engines: compare, times });
    p.append(" · ", two);
  }
  p.append(" — the machine code each tier runs, and why this time");
  // A link inside the dialog: close it as the view opens.
  p.addEventListener("click", (ev) => {
    if ((ev.target as HTMLElement).tagName === "A") (p.closest("dialog") as HTMLDialogElement | null)?.close();
  });
  return p;
}

/** mountCodeView shows the view whenever the URL's fragment names one, and hides it when
 * the fragment goes. */
export function mountCodeView(serverEngines: () => string[]): void {
  const host = document.createElement("section");
  host.id = "code-view";
  host.hidden = true;
  host.setAttribute("aria-label", "code");
  document.body.append(host);
  let shown = "";
  let abort: AbortController | undefined;
  const update = () => {
    const req = parseCodeHash(location.hash);
    if (!req) {
      host.hidden = true;
      shown = "";
      abort?.abort();
      return;
    }
    if (location.hash === shown) return;
    shown = location.hash;
    abort?.abort();
    abort = new AbortController();
    host.hidden = false;
    void render(host, req, serverEngines(), abort.signal);
  };
  window.addEventListener("hashchange", update);
  update();
}

async function render(host: HTMLElement, req: CodeRequest, choices: string[], signal: AbortSignal): Promise<void> {
  const call = label(req.kernel, req.params.map(([, v]) => v));
  const head = document.createElement("header");
  const title = document.createElement("h2");
  title.textContent = `Code of ${call}`;
  const close = document.createElement("a");
  close.className = "close-code";
  close.textContent = "✕ close";
  close.href = "#";
  close.addEventListener("click", (ev) => {
    ev.preventDefault();
    history.pushState(null, "", location.pathname + location.search);
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  });
  const add = document.createElement("select");
  add.className = "add-tier";
  add.append(new Option(req.engines.length >= MAX_TIERS ? `at most ${MAX_TIERS} tiers side by side` : "compare with…", ""));
  for (const e of ["source", "wasm", ...choices]) {
    if (!req.engines.includes(e)) add.append(new Option(e === "source" ? "Go source" : e === "wasm" ? "kernels.wasm" : info(e).title, e));
  }
  add.disabled = req.engines.length >= MAX_TIERS;
  add.addEventListener("change", () => {
    if (add.value) location.hash = codeHash({ ...req, engines: [...req.engines, add.value] });
  });
  const note = document.createElement("p");
  note.className = "muted";
  note.textContent =
    "Each tier's code of the kernel's hot function after the harness's warm-up, decoded by one disassembler (golang.org/x/arch), " +
    "aligned at the first recursive call of a recursive kernel, else at the first loop head. ◀ marks a recursive call, ↑ a loop's back edge, ● a loop head.";
  const profile = document.createElement("label");
  const box = document.createElement("input");
  box.type = "checkbox";
  box.className = "code-profile";
  box.checked = !!req.profile;
  box.addEventListener("change", () => (location.hash = codeHash({ ...req, profile: box.checked })));
  profile.append(box, " profile (perf: where each tier's time goes)");
  head.append(title, add, profile, close);
  const cols = document.createElement("div");
  cols.className = "code-columns";
  host.replaceChildren(head, note, cols);

  const columns = req.engines.map((e) => {
    const col = document.createElement("div");
    col.className = "code-column";
    col.dataset.engine = e;
    col.dataset.state = "loading";
    col.textContent = `${e}: explaining… (a JIT's warm-up and its printed code take seconds)`;
    cols.append(col);
    return col;
  });
  const results = await Promise.all(req.engines.map((e) => explainOne(req, e, signal).catch((err: unknown) => err)));
  if (signal.aborted) return;
  const listings: (CodeListing | undefined)[] = [];
  results.forEach((res, i) => {
    const e = req.engines[i]!;
    const col = columns[i]!;
    if (res instanceof Error || typeof res !== "object" || res === null) {
      col.dataset.state = "error";
      col.textContent = `${e}: ${res instanceof Error ? res.message : String(res)}`;
      listings.push(undefined);
      return;
    }
    const ex = (res as ExplainReport).engines[0];
    if (!ex || ex.refused || !ex.listings?.length) {
      col.dataset.state = "refused";
      col.textContent = `${e}: not explained: ${ex?.refused ?? "no listing"}`;
      listings.push(undefined);
      return;
    }
    listings.push(ex.listings[0]);
  });
  // Aligned at each listing's anchor (anchorOf).
  const anchors = listings.map((l) => (l ? anchorOf(l) : 0));
  const top = Math.max(0, ...anchors);
  listings.forEach((l, i) => {
    if (!l) return;
    const e = req.engines[i]!;
    const all = (results[i] as ExplainReport).engines[0]!.listings!;
    fillColumn(columns[i]!, e, all, 0, req.times[e], top);
  });
}

async function explainOne(req: CodeRequest, engine: string, signal: AbortSignal): Promise<ExplainReport> {
  const q = new URLSearchParams({ kernel: req.kernel, engine });
  for (const [k, v] of req.params) q.set(k, String(v));
  if (req.profile) q.set("profile", "1");
  const resp = await fetch(`/api/explain?${q}`, { signal });
  if (!resp.ok) throw await failure(resp);
  return (await resp.json()) as ExplainReport;
}

/** anchorOf is the line a listing is aligned at: its first recursive call in a recursive
 * kernel (where a loop head is mostly a stack check's retry or Go's resumption dispatch),
 * else its first loop head. */
function anchorOf(l: CodeListing): number {
  const rec = l.lines.findIndex((ln) => ln.recursive);
  if (rec >= 0) return rec;
  const head = l.lines.findIndex((ln) => ln.loop_head);
  return head >= 0 ? head : 0;
}

function fillColumn(col: HTMLElement, engine: string, all: CodeListing[], which: number, time: number | undefined, top: number): void {
  const l = all[which]!;
  col.dataset.state = "done";
  col.dataset.tier = l.tier;
  const h = document.createElement("h3");
  h.textContent = engine === "source" ? "Go source" : engine === "wasm" ? "kernels.wasm" : info(engine).title;
  // One tier is named, not offered in a select with nothing to choose.
  const tier = document.createElement(all.length < 2 ? "span" : "select");
  tier.className = "tier";
  if (tier instanceof HTMLSelectElement) {
    all.forEach((x, i) => tier.append(new Option(x.tier, String(i), i === which, i === which)));
    tier.addEventListener("change", () => fillColumn(col, engine, all, Number(tier.value), time, top));
  } else tier.textContent = all[which]?.tier ?? "";
  const stats = document.createElement("p");
  stats.className = "code-stats";
  const unit = l.kind === "source" ? "lines" : l.kind === "trace" ? "operations" : "instructions";
  stats.textContent =
    `${l.instructions} ${unit}${l.bytes ? ` · ${l.bytes} bytes` : ""} · ${count(l.calls, "call")}${l.recursive_calls ? ` (${l.recursive_calls} recursive)` : ""} · ${count(l.back_edges, "back edge")}` +
    (time !== undefined ? ` · ${duration(time)} per call` : "");
  const from = document.createElement("p");
  from.className = "muted code-from";
  from.textContent = [l.function, l.from, ...(l.notes ?? [])].join(" — ");
  const table = document.createElement("table");
  table.className = "code";
  const body = table.createTBody();
  const pad = top - anchorOf(l);
  for (let i = 0; i < pad; i++) body.insertRow().className = "pad";
  const hot = l.profile && !l.profile.refused && l.profile.in_function > 0 ? l.profile.in_function : 0;
  for (const ln of l.lines) {
    const tr = body.insertRow();
    tr.dataset.offset = String(ln.offset);
    const marks: string[] = [];
    if (ln.loop_head) marks.push("●");
    if (ln.recursive) marks.push("◀");
    else if (ln.call) marks.push("→");
    if (ln.back_edge) marks.push("↑");
    tr.classList.toggle("recursive", !!ln.recursive);
    tr.classList.toggle("call", !!ln.call);
    tr.classList.toggle("back-edge", !!ln.back_edge);
    tr.classList.toggle("loop-head", !!ln.loop_head);
    tr.classList.toggle("data", !!ln.data);
    const heat = tr.insertCell();
    heat.className = "heat";
    if (hot && ln.samples) {
      const share = ln.samples / hot;
      heat.textContent = `${(100 * share).toFixed(1)}%`;
      heat.style.background = `rgb(220 60 40 / ${Math.min(0.9, 0.1 + share * 3)})`;
    }
    const off = tr.insertCell();
    off.className = "off";
    // Machine code and wasm count bytes (hex); a source, an interpreter's bytecode and a
    // trace count as their runtime does (decimal).
    off.textContent = l.kind === "machine code" || l.kind === "wasm" ? `+${ln.offset.toString(16)}` : String(ln.offset);
    const mark = tr.insertCell();
    mark.className = "mark";
    mark.textContent = marks.join("");
    const text = tr.insertCell();
    text.className = "text";
    text.textContent = ln.text;
    if (ln.note) text.title = ln.note;
  }
  const prof = document.createElement("p");
  prof.className = "muted";
  if (l.profile) {
    prof.textContent = l.profile.refused ? `profile: none (${l.profile.refused})` : `profile: ${l.profile.in_function} of ${l.profile.samples} samples in this code`;
  }
  col.replaceChildren(h, tier, stats, from, prof, table);
}

/** count writes a count with its noun: "1 call", "2 back edges". */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
