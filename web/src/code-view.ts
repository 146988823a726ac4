// The Code view: why a cell's number is what it is. For one kernel call, one to four tiers'
// code of the kernel's hot function (GET /api/explain, one request per tier: machine code
// decoded by one disassembler, the wasm, the Go source), each column shown as its tier
// answers, scrolled so that the columns' aligned points (their loop heads, their first
// recursive call in a recursive kernel) line up in view, with each tier's instruction count,
// size and time per call above it and the tiers' summary in words (the server's) at the top.
// Selecting a Go line lights the instructions compiled from it in every column that keeps
// its line table. At phone widths one tier is shown at a time, with a switcher. The view is
// a URL of its own: #code?kernel=K&<param>=<value>…&engines=A,B[&t.A=ns…].

import "./code-view.css";
import { failure } from "./api";
import { info } from "./engines";
import { duration, label } from "./format";
import type { Grid } from "./results";
import { el } from "./dom";

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
  /** The Go line the instruction was compiled from, where the tier keeps its line table. */
  source_file?: string;
  source_line?: number;
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
  /** Why the instructions carry no Go line, where the server knows. */
  no_lines?: string;
}

/** One listing in words (explain.Summarize): the same words `wasmgap explain` ends with. */
interface SummaryRow {
  engine: string;
  tier?: string;
  form?: string;
  instructions: number;
  words: string;
}

/** The answer of GET /api/explain for one engine. */
interface ExplainReport {
  label: string;
  engines: { engine: string; listings?: CodeListing[]; refused?: string }[];
  summary?: SummaryRow[];
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
  const p = el("p", "code-links");
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
  const one = el("a", "code-link", "Code");
  one.href = codeHash({ kernel: row.kernel.name, params, engines: [engine], times });
  p.append(one);
  if (compare.length > 1) {
    const two = el("a", "compare-code-link", `compare code with ${info(compare[1]!).title}`);
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

/** What the view needs of the catalogue: the server's engines, and those whose
 * explanation waits for a JIT's warm-up. */
export interface CodeCatalogue {
  engines: string[];
  explain_jits?: string[];
}

/** mountCodeView shows the view whenever the URL's fragment names one, and hides it when
 * the fragment goes. */
export function mountCodeView(catalogue: () => CodeCatalogue): void {
  const host = document.createElement("section");
  host.id = "code-view";
  host.hidden = true;
  host.setAttribute("aria-label", "code");
  document.body.append(host);
  let shown = "";
  let abort: AbortController | undefined;
  const update = () => {
    const req = parseCodeHash(location.hash);
    // The page beneath the view does not scroll while the view covers it.
    document.documentElement.classList.toggle("code-open", !!req);
    if (!req) {
      host.hidden = true;
      shown = "";
      abort?.abort();
      current = undefined;
      return;
    }
    if (location.hash === shown) return;
    shown = location.hash;
    abort?.abort();
    abort = new AbortController();
    host.hidden = false;
    render(host, req, catalogue(), abort.signal);
  };
  window.addEventListener("hashchange", update);
  window.addEventListener("resize", () => {
    if (current) align(current);
  });
  update();
}

/** One tier's column: its element, and once its listing is in, the box that scrolls it,
 * the row it is aligned at and the spacer above the table that lets a short listing be
 * aligned too. */
interface Column {
  engine: string;
  el: HTMLElement;
  tab: HTMLButtonElement;
  box?: HTMLElement;
  spacer?: HTMLElement;
  anchor?: HTMLTableRowElement;
  /** The scroll the view gave the box; touched once the reader scrolls it elsewhere. */
  aligned?: number;
  touched?: boolean;
}

/** The view on screen: its columns, and the Go line selected and hovered. */
interface View {
  columns: Column[];
  summaries: Map<string, SummaryRow[]>;
  summary: HTMLElement;
  selected: string;
  hovered: string;
}

let current: View | undefined;

function title(engine: string): string {
  return engine === "source" ? "Go source" : engine === "wasm" ? "kernels.wasm" : info(engine).title;
}

/** waiting says what a column waits for: a JIT's warm-up only for a JIT. */
function waiting(engine: string, jits: string[]): string {
  if (engine === "source") return "reading the Go source…";
  if (engine === "wasm") return "decoding kernels.wasm's function…";
  if (jits.includes(engine)) return "explaining… (a JIT's warm-up and its printed code take seconds)";
  return "explaining… (reading the code this tier runs)";
}

function render(host: HTMLElement, req: CodeRequest, cat: CodeCatalogue, signal: AbortSignal): void {
  const call = label(req.kernel, req.params.map(([, v]) => v));
  const head = document.createElement("header");
  const h2 = el("h2", undefined, `Code of ${call}`);
  const close = el("a", "close-code", "✕ close");
  close.href = "#";
  close.addEventListener("click", (ev) => {
    ev.preventDefault();
    history.pushState(null, "", location.pathname + location.search);
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  });
  let add: HTMLElement;
  if (req.engines.length >= MAX_TIERS) {
    add = el("span", "add-tier muted", `${MAX_TIERS} tiers, the most side by side`);
  } else {
    const sel = el("select", "add-tier");
    sel.append(new Option("compare with…", ""));
    for (const e of ["source", "wasm", ...cat.engines]) if (!req.engines.includes(e)) sel.append(new Option(title(e), e));
    sel.addEventListener("change", () => {
      if (sel.value) location.hash = codeHash({ ...req, engines: [...req.engines, sel.value] });
    });
    add = sel;
  }
  // How to read the columns, folded: at phone widths the code itself comes first.
  const note = el("details", "muted code-note");
  const legend = el("summary", undefined, "How to read the columns");
  note.append(legend);
  note.append(
    "Each tier's code of the kernel's hot function after the harness's warm-up, decoded by one disassembler (golang.org/x/arch), " +
    "lined up at the first recursive call of a recursive kernel, else at the first loop head. ◀ marks a recursive call, ↑ a loop's back edge, ● a loop head; " +
    "select a Go line (click, or Enter) to light its instructions. The terms: docs/KERNELS.md § Glossary of explain's terms.",
  );
  const profile = document.createElement("label");
  const box = el("input", "code-profile");
  box.type = "checkbox";
  box.checked = !!req.profile;
  box.addEventListener("change", () => (location.hash = codeHash({ ...req, profile: box.checked })));
  profile.append(box, " profile (perf: where each tier's time goes)");
  head.append(h2, add, profile, close);
  const summary = el("ul", "code-summary");
  summary.setAttribute("aria-label", "summary");
  const switcher = el("nav", "code-switch");
  switcher.setAttribute("aria-label", "tiers");
  const cols = el("div", "code-columns");
  host.replaceChildren(head, note, summary, switcher, cols);

  const view: View = { columns: [], summaries: new Map(), summary, selected: "", hovered: "" };
  current = view;
  const show = (i: number) => {
    view.columns.forEach((c, j) => {
      c.el.classList.toggle("shown", i === j);
      c.tab.setAttribute("aria-pressed", String(i === j));
    });
    align(view);
  };
  req.engines.forEach((e, i) => {
    const column = el("div", "code-column");
    column.dataset.engine = e;
    column.dataset.state = "loading";
    column.textContent = `${title(e)}: ${waiting(e, cat.explain_jits ?? [])}`;
    cols.append(column);
    const tab = el("button", undefined, title(e));
    tab.type = "button";
    tab.addEventListener("click", () => show(i));
    switcher.append(tab);
    view.columns.push({ engine: e, el: column, tab });
  });
  show(0);
  lineEvents(view, cols);

  // The quick tiers are asked first and the JITs once they have answered: an address's
  // explanations share its places in the server's queue, where a JIT's warm-up ahead of
  // native's code would hold it back for seconds.
  const jits = cat.explain_jits ?? [];
  const load = (col: Column) =>
    explainOne(req, col.engine, signal).then(
      (rep) => {
        if (signal.aborted) return;
        view.summaries.set(col.engine, rep.summary ?? []);
        writeSummary(view);
        const ex = rep.engines[0];
        if (!ex || ex.refused || !ex.listings?.length) {
          col.el.dataset.state = "refused";
          col.el.textContent = `${title(col.engine)}: not explained: ${ex?.refused ?? "no listing"}`;
          return;
        }
        fillColumn(view, col, ex.listings, 0, req.times[col.engine]);
      },
      (err: unknown) => {
        if (signal.aborted) return;
        col.el.dataset.state = "error";
        col.el.textContent = `${title(col.engine)}: ${err instanceof Error ? err.message : String(err)}`;
      },
    );
  void Promise.all(view.columns.filter((c) => !jits.includes(c.engine)).map(load)).then(() => {
    if (!signal.aborted) view.columns.filter((c) => jits.includes(c.engine)).forEach(load);
  });
}

/** writeSummary lists the tiers' summaries in words, in the columns' order. */
function writeSummary(view: View): void {
  view.summary.replaceChildren(
    ...view.columns.flatMap((c) =>
      (view.summaries.get(c.engine) ?? []).map((r) => {
        const li = document.createElement("li");
        const b = el("b", undefined, r.tier && r.tier !== title(c.engine) ? `${title(c.engine)} · ${r.tier}` : title(c.engine));
        li.append(b, `: ${r.words}`);
        return li;
      }),
    ),
  );
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

/** align scrolls every column the reader has not scrolled so that the aligned points of
 * the columns on screen sit at one height, a third down the lowest-starting box. */
function align(view: View): void {
  const on = view.columns.filter((c) => c.box && c.box.clientHeight > 0);
  if (on.length === 0) return;
  const y = Math.max(...on.map((c) => c.box!.getBoundingClientRect().top)) + Math.min(...on.map((c) => c.box!.clientHeight)) / 3;
  for (const c of on) {
    if (c.touched || !c.anchor) continue;
    const box = c.box!;
    const spacer = c.spacer!;
    // The anchor's place in the box's content, less the spacer above it.
    const at = c.anchor.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop - spacer.offsetHeight;
    const top = box.getBoundingClientRect().top;
    const scroll = top + at - y;
    spacer.style.height = `${Math.max(0, -scroll)}px`;
    box.scrollTop = Math.max(0, scroll);
    c.aligned = box.scrollTop;
  }
}

/** lineKey names the Go line a listing's line is, or was compiled from: "kernels/loops.go:12"
 * ("" where the tier keeps no line table). */
function lineKey(l: CodeListing, ln: CodeLine): string {
  if (l.kind === "source") return `${l.from}:${ln.offset}`;
  return ln.source_line ? `${ln.source_file}:${ln.source_line}` : "";
}

/** lineEvents lights a Go line's rows in every column as it is hovered, and keeps them lit
 * once it is selected (a click, or Enter or Space on a row); selecting it again lets go. */
function lineEvents(view: View, cols: HTMLElement): void {
  const keyOf = (ev: Event) => (ev.target as HTMLElement).closest<HTMLElement>("tr[data-line]")?.dataset.line ?? "";
  cols.addEventListener("mouseover", (ev) => {
    view.hovered = keyOf(ev);
    light(view);
  });
  cols.addEventListener("mouseleave", () => {
    view.hovered = "";
    light(view);
  });
  const select = (key: string) => {
    if (!key) return;
    view.selected = view.selected === key ? "" : key;
    light(view);
    if (view.selected) reveal(view);
  };
  cols.addEventListener("click", (ev) => select(keyOf(ev)));
  cols.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" && ev.key !== " ") return;
    const key = keyOf(ev);
    if (!key) return;
    ev.preventDefault();
    select(key);
  });
}

/** light marks the rows of the selected and the hovered Go lines. */
function light(view: View): void {
  for (const c of view.columns) {
    for (const tr of c.el.querySelectorAll<HTMLElement>("tr[data-line]")) {
      tr.classList.toggle("line-selected", tr.dataset.line === view.selected);
      tr.classList.toggle("line-hovered", tr.dataset.line === view.hovered);
    }
  }
}

/** reveal scrolls each column whose rows of the selected line are all out of its box to
 * the first of them. */
function reveal(view: View): void {
  for (const c of view.columns) {
    if (!c.box || c.box.clientHeight === 0) continue;
    const rows = [...c.el.querySelectorAll<HTMLElement>("tr.line-selected")];
    const b = c.box.getBoundingClientRect();
    const seen = rows.some((r) => {
      const rr = r.getBoundingClientRect();
      return rr.bottom > b.top && rr.top < b.bottom;
    });
    if (rows.length === 0 || seen) continue;
    c.box.scrollTop += rows[0]!.getBoundingClientRect().top - b.top - c.box.clientHeight / 3;
    c.touched = true;
  }
}

function fillColumn(view: View, col: Column, all: CodeListing[], which: number, time: number | undefined): void {
  const l = all[which]!;
  const column = col.el;
  column.dataset.state = "done";
  column.dataset.tier = l.tier;
  const h = el("h3", undefined, title(col.engine));
  // One tier is named, not offered in a select with nothing to choose.
  const tier = document.createElement(all.length < 2 ? "span" : "select");
  tier.className = "tier";
  if (tier instanceof HTMLSelectElement) {
    all.forEach((x, i) => tier.append(new Option(x.tier, String(i), i === which, i === which)));
    tier.addEventListener("change", () => {
      col.touched = false;
      fillColumn(view, col, all, Number(tier.value), time);
    });
  } else tier.textContent = l.tier;
  const stats = el("p", "code-stats");
  const unit = l.kind === "source" ? "line" : l.kind === "trace" ? "operation" : "instruction";
  stats.textContent =
    `${count(l.instructions, unit)}${l.bytes ? ` · ${count(l.bytes, "byte")}` : ""} · ${count(l.calls, "call")}${l.recursive_calls ? ` (${l.recursive_calls} recursive)` : ""} · ${count(l.back_edges, "back edge")}` +
    (time !== undefined ? ` · ${duration(time)} per call` : "");
  const from = el("p", "muted code-from", [l.function, l.from, ...(l.notes ?? [])].join(" — "));
  const mapped = l.lines.some((ln) => ln.source_line);
  const lines = el("p", "muted code-lines");
  lines.dataset.mapped = String(l.kind === "source" || mapped);
  lines.textContent =
    l.kind === "source"
      ? "select a line to light the instructions compiled from it"
      : mapped
        ? "each instruction's Go line beside it: select one to light that line's instructions"
        : (l.no_lines ?? "no line table for this tier: its instructions carry no Go line");
  const table = el("table", "code");
  const body = table.createTBody();
  const hot = l.profile && !l.profile.refused && l.profile.in_function > 0 ? l.profile.in_function : 0;
  for (const ln of l.lines) {
    const tr = body.insertRow();
    tr.dataset.offset = String(ln.offset);
    const key = lineKey(l, ln);
    if (key) {
      tr.dataset.line = key;
      tr.tabIndex = 0;
    }
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
    if (mapped) {
      const src = tr.insertCell();
      src.className = "src";
      if (ln.source_line) {
        src.textContent = `:${ln.source_line}`;
        src.title = `${ln.source_file}:${ln.source_line}`;
      }
    }
    const mark = tr.insertCell();
    mark.className = "mark";
    mark.textContent = marks.join("");
    const text = tr.insertCell();
    text.className = "text";
    text.textContent = ln.text;
    if (ln.note) text.title = ln.note;
  }
  const prof = el("p", "muted");
  if (l.profile) {
    prof.textContent = l.profile.refused ? `profile: none (${l.profile.refused})` : `profile: ${l.profile.in_function} of ${l.profile.samples} samples in this code`;
  }
  const box = el("div", "code-scroll");
  const spacer = el("div", "code-spacer");
  const after = el("div", "code-after");
  box.append(spacer, table, after);
  box.addEventListener("scroll", () => {
    if (col.aligned !== undefined && Math.abs(box.scrollTop - col.aligned) > 2) col.touched = true;
  });
  column.replaceChildren(h, tier, stats, from, lines, prof, box);
  Object.assign(col, { box, spacer, anchor: body.rows[anchorOf(l)], aligned: undefined });
  light(view);
  align(view);
}

/** count writes a count with its noun: "1 call", "2 back edges". */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
