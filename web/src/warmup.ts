// The Warm-up view: every call of a kernel timed from the first, in fresh processes on the
// server (POST /api/warmup, package internal/warmup's analysis), drawn as small multiples —
// one per engine, time per call on a log axis against the call number, each execution a
// line, its changepoints marked — with the classification in words ("warm-up, steady
// after 1,240 calls, 38 ms"). The view is a URL of its own: ?view=warmup&kernel=…&n=…&e=…;
// a stored study's is ?view=warmup&study=ID (warmup-stored.ts).

import { postNDJSON } from "./api";
import { info } from "./engines";
import { duration } from "./format";
import type { Catalogue, Kernel, Limit, Setup } from "./types";
import { fetchStudy, showStudyLink } from "./warmup-stored";
import { button, el, svg } from "./dom";

/** The analysis of one execution (package internal/warmup's Execution). */
interface Execution {
  samples: number;
  group: number;
  changepoints: number[];
  class: string;
  steady_start: number;
  steady_calls: number;
  steady_after_ns: number;
  steady_median_ns: number;
  first_ns: number;
  early_ns: number;
  worst_ns: number;
  average_ns: number;
}

/** One execution: its series and analysis (package internal/warmup's Run). */
interface WarmupRun {
  times_ns: number[] | null;
  group: number;
  timer: string;
  /** The load before the first call (wazero's compile, a browser's wasm tier's). */
  setup?: Setup;
  failure?: string;
  error?: string;
  analysis?: Execution;
}

interface EngineResult {
  engine: string;
  runs: WarmupRun[];
  pair?: { verdict: string; class?: string; good: boolean };
}

/** A study (package internal/warmup's Report). */
export interface WarmupReport {
  kernel: string;
  label: string;
  args: number[];
  method: { executions: number; penalty: string; collection: { samples: number; group: number; budget_ns: number } };
  engines: EngineResult[];
}

interface WarmupEvent {
  type: string;
  position?: number;
  engine?: string;
  execution?: number;
  result?: WarmupReport;
  /** The study's id in the results store, when the server keeps one. */
  id?: number;
  error?: string;
}

/** The study the view shows first: fib_rec(20) where HotSpot's C2 and V8's TurboFan show. */
const DEFAULT_ENGINES = ["native", "java", "node-js", "pypy"];

/** The colours of the executions within one engine's plot. */
const RUN_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"];

/** thousands writes n with commas, as the CLI does. */
function thousands(n: number): string {
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** millis writes ns as milliseconds, as the CLI does. */
function millis(ns: number): string {
  const ms = ns / 1e6;
  if (ms >= 10) return `${ms.toFixed(0)} ms`;
  if (ms >= 1) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

/** words says an execution's class as the CLI does. */
export function words(x: Execution): string {
  if (x.class === "flat" || x.class === "no steady state") return x.class;
  return `${x.class}, steady after ${thousands(x.steady_calls)} calls, ${millis(x.steady_after_ns)}`;
}

/** The page's sections the Warm-up view takes the place of. */
const OTHER_SECTIONS = ["controls", "form", "results", "custom", "stored"];

/**
 * mountWarmup adds the Warm-up tab, a tab like the others: it shows the view in the page's
 * place (?view=warmup in the URL, so that a link opens it), and another tab gives the page
 * back as it was, its selection's URL with it.
 */
export function mountWarmup(cat: Catalogue): void {
  const tabs = document.getElementById("tabs");
  const q = new URLSearchParams(location.search);
  let section: HTMLElement | undefined;
  let before: { url: string; hidden: Map<HTMLElement, boolean> } | undefined;
  const tab = button("tab-warmup", "Warm-up");
  tab.setAttribute("role", "tab");
  tab.setAttribute("aria-selected", "false");
  const open = (query: URLSearchParams): void => {
    if (before) return;
    const others = OTHER_SECTIONS.map((id) => document.getElementById(id)).filter((e): e is HTMLElement => e !== null);
    before = { url: location.pathname + location.search + location.hash, hidden: new Map(others.map((e) => [e, e.hidden])) };
    for (const e of others) e.hidden = true;
    for (const b of tabs?.querySelectorAll<HTMLElement>("[role=tab]") ?? []) b.setAttribute("aria-selected", String(b === tab));
    if (!section) {
      section = el("section", "card");
      section.id = "warmup-view";
      section.setAttribute("aria-label", "warm-up");
      section.style.gridColumn = "1 / -1";
      const anchor = document.getElementById("results");
      if (anchor?.parentElement) anchor.parentElement.insertBefore(section, anchor);
      else document.body.append(section);
      buildView(section, cat, query);
    } else {
      section.hidden = false;
      history.replaceState(null, "", `?${section.dataset.query ?? "view=warmup"}`);
    }
    document.body.dataset.tab = "warmup";
  };
  const close = (): void => {
    if (!before || !section) return;
    section.dataset.query = location.search.slice(1);
    section.hidden = true;
    for (const [e, h] of before.hidden) e.hidden = h;
    tab.setAttribute("aria-selected", "false");
    history.replaceState(null, "", before.url.includes("view=warmup") ? location.pathname : before.url);
    before = undefined;
  };
  if (tabs) {
    tabs.hidden = false;
    if (!cat.panels["custom"]) document.getElementById("tab-custom")?.setAttribute("hidden", "");
    // Before the other tabs' own handlers: the page is given back first, then their view.
    for (const b of tabs.querySelectorAll<HTMLElement>("button[role=tab]")) b.addEventListener("click", close, { capture: true });
    tabs.append(tab);
    tab.onclick = () => open(new URLSearchParams());
  }
  if (q.get("view") === "warmup") open(q);
}

function buildView(section: HTMLElement, cat: Catalogue, q: URLSearchParams): void {
  const kernelSel = el("select");
  kernelSel.id = "warmup-kernel";
  for (const k of cat.kernels.filter((k) => !k.host_call)) kernelSel.append(new Option(k.name, k.name));
  kernelSel.value = cat.kernels.some((k) => k.name === q.get("kernel")) ? (q.get("kernel") as string) : "fib_rec";
  const argsHost = el("span");
  const kernel = (): Kernel | undefined => cat.kernels.find((k) => k.name === kernelSel.value);
  const argInputs = new Map<string, HTMLInputElement>();
  const drawArgs = (fromQuery: boolean): void => {
    argsHost.replaceChildren();
    argInputs.clear();
    for (const p of kernel()?.params ?? []) {
      const input = el("input");
      input.type = "number";
      input.id = `warmup-arg-${p.name}`;
      input.min = String(p.min);
      input.max = String(p.max);
      const fallback = kernelSel.value === "fib_rec" && p.name === "n" ? 20 : p.default;
      input.value = (fromQuery && q.get(p.name)) || String(fallback);
      input.onchange = () => saveURL();
      argInputs.set(p.name, input);
      const l = el("label");
      l.append(`${p.name} `, input);
      argsHost.append(l);
    }
  };
  drawArgs(true);
  kernelSel.onchange = () => {
    drawArgs(false);
    saveURL();
  };

  const chosen = (q.get("e") ?? DEFAULT_ENGINES.join(",")).split(",").filter((e) => cat.engines.includes(e));
  const engineBoxes = el("div", "warmup-engines");
  for (const name of cat.engines) {
    const l = el("label", "engine-chip");
    const cb = el("input");
    cb.type = "checkbox";
    cb.value = name;
    cb.name = "warmup-engine";
    cb.checked = chosen.includes(name);
    cb.onchange = () => saveURL();
    l.append(cb, ` ${info(name).title}`);
    engineBoxes.append(l);
  }
  // The limits are the server's table's (runner.Bounds, served by GET /api/kernels).
  const number = (id: string, value: string | null, lim: Limit): HTMLInputElement => {
    const i = el("input");
    i.type = "number";
    i.id = id;
    i.min = String(lim.min);
    i.max = String(lim.max);
    i.value = value ?? String(lim.default);
    i.onchange = () => saveURL();
    return i;
  };
  const execIn = number("warmup-executions", q.get("executions"), cat.study_executions);
  const callsIn = number("warmup-calls", q.get("calls"), cat.calls);
  const budgetIn = number("warmup-budget", q.get("budget_ms"), cat.budget_ms);
  const runBtn = button("warmup-run", "Run");
  const status = el("p", "muted small");
  status.id = "warmup-status";
  const plots = el("div", "warmup-plots");
  plots.id = "warmup-plots";
  plots.style.display = "grid";
  plots.style.gridTemplateColumns = "repeat(auto-fill, minmax(340px, 1fr))";
  plots.style.gap = "1rem";

  const labelled = (text: string, input: HTMLElement): HTMLLabelElement => {
    const l = el("label");
    l.append(`${text} `, input);
    return l;
  };
  const bar = el("div", "toolbar");
  bar.append(labelled("kernel", kernelSel), argsHost, labelled("executions", execIn), labelled("calls", callsIn), labelled("budget (ms)", budgetIn), runBtn);
  section.replaceChildren(
    el("h2", undefined, "Warm-up: every call from the first"),
    el(
      "p",
      "muted small",
      "Each execution is a fresh process on the server; every call is timed inside its runtime from the first. " +
        "Changepoints by PELT (penalty 15·ln n) on each series; an execution is flat, a warm-up, a slowdown or has no steady state, as in Barrett et al., “Virtual Machine Warmup Blows Hot and Cold” (OOPSLA 2017).",
    ),
    legend(),
    bar,
    engineBoxes,
    status,
    plots,
  );

  const selectedEngines = (): string[] =>
    [...engineBoxes.querySelectorAll<HTMLInputElement>("input[name=warmup-engine]")].filter((c) => c.checked).map((c) => c.value);
  const args = (): Record<string, number> => Object.fromEntries([...argInputs].map(([k, i]) => [k, Number(i.value)]));
  function saveURL(): void {
    const u = new URLSearchParams({ view: "warmup", kernel: kernelSel.value });
    for (const [k, v] of Object.entries(args())) u.set(k, String(v));
    u.set("e", selectedEngines().join(","));
    u.set("executions", execIn.value);
    u.set("calls", callsIn.value);
    u.set("budget_ms", budgetIn.value);
    history.replaceState(null, "", `?${u}`);
  }

  let running: AbortController | undefined;
  runBtn.onclick = async () => {
    running?.abort();
    const ctl = new AbortController();
    running = ctl;
    saveURL();
    plots.replaceChildren();
    section.dataset.state = "running";
    status.textContent = "asking the server…";
    const body = {
      kernel: kernelSel.value,
      args: args(),
      engines: selectedEngines(),
      executions: Number(execIn.value),
      calls: Number(callsIn.value),
      // Left at its default, the budget is the server's to share out among the engines.
      ...(budgetIn.value === String(cat.budget_ms.default) ? {} : { budget_ms: Number(budgetIn.value) }),
    };
    try {
      await postNDJSON<WarmupEvent>("/api/warmup", body, ctl.signal, (e) => {
        switch (e.type) {
          case "queued":
            status.textContent = `queued: ${e.position ?? "?"} ahead`;
            break;
          case "started":
            status.textContent = "started";
            break;
          case "progress":
            status.textContent = `${info(e.engine ?? "").title}: execution ${e.execution ?? "?"} of ${body.executions}`;
            break;
          case "result":
            if (e.result) {
              renderWarmup(plots, e.result);
              status.textContent = describe(e.result);
              if (e.id) showStudyLink(status, e.id);
            }
            break;
          case "error":
            status.textContent = e.error ?? "the server gave up";
            break;
        }
      });
      section.dataset.state = "done";
    } catch (err) {
      if (ctl.signal.aborted) return;
      status.textContent = err instanceof Error ? err.message : String(err);
      section.dataset.state = "failed";
    }
  };
  const study = q.get("study");
  if (study) {
    // A stored study: drawn as it was, its kernel and engines in the form for a new run.
    section.dataset.state = "loading";
    status.textContent = `reading study ${study}…`;
    fetchStudy(study)
      .then((st) => {
        kernelSel.value = st.report.kernel;
        drawArgs(false);
        const names = st.report.engines.map((e) => e.engine);
        for (const c of engineBoxes.querySelectorAll<HTMLInputElement>("input[name=warmup-engine]")) c.checked = names.includes(c.value);
        renderWarmup(plots, st.report);
        status.textContent = `Study ${st.id}, stored ${st.created.slice(0, 16).replace("T", " ")} UTC (${st.source}, wasmgap ${st.wasmgap}). ${describe(st.report)}`;
        section.dataset.state = "done";
      })
      .catch((err: unknown) => {
        status.textContent = err instanceof Error ? err.message : String(err);
        section.dataset.state = "failed";
      });
    return;
  }
  saveURL();
  if (q.get("run") === "warmup") runBtn.click(); // a link that runs the study at once
}

/** legend says what the classes mean, as Barrett et al. define them, and what a busy
 * machine does to them. */
function legend(): HTMLElement {
  const d = el("details", "warmup-legend small");
  d.append(el("summary", undefined, "What the classes mean"));
  const dl = el("dl", "pairs");
  for (const [k, v] of [
    ["flat", "no change of level that matters: the first calls run as the last"],
    ["warm-up", "the steady state is faster than every earlier level: a JIT's tiers, caches filling"],
    ["slowdown", "the steady state is slower than an earlier level: a tier given up, a collector's growing heap"],
    ["no steady state", "the last change of level comes too late for what follows it to be called steady"],
    ["consistent", "every execution of the engine (each a fresh process) has the same class"],
    ["good inconsistent", "the executions differ, but each is flat or a warm-up"],
    ["bad inconsistent", "the executions differ, and one is a slowdown or has no steady state"],
    ["changepoints", "the ticks along each plot's top: where PELT cuts the series; the thick line marks where the steady state starts"],
    ["a busy machine", "other processes' load shows as slowdowns and steps that are the machine's, not the engine's: read a study run beside other work with care"],
  ] as const) {
    dl.append(el("dt", undefined, k), el("dd", undefined, v));
  }
  d.append(dl);
  return d;
}

/** describe is the line above the plots: the study and its method. */
function describe(r: WarmupReport): string {
  const c = r.method.collection;
  return `${r.label}: ${r.method.executions} executions per engine, up to ${thousands(c.samples)} samples of ${c.group} call${c.group > 1 ? "s" : ""} or ${millis(c.budget_ns)} each; ${r.method.penalty}.`;
}

/** renderWarmup draws the study's small multiples into host, one figure per engine. */
export function renderWarmup(host: HTMLElement, r: WarmupReport): void {
  host.replaceChildren();
  for (const e of r.engines) host.append(plotEngine(e));
}

/** Past this many changepoints in an execution, none is drawn (the words give the count). */
const MAX_MARKED_CHANGEPOINTS = 12;

const W = 340;
const H = 170;
const PAD = { left: 52, right: 8, top: 8, bottom: 24 };

function plotEngine(e: EngineResult): HTMLElement {
  const fig = el("figure", "warmup-plot");
  fig.dataset.engine = e.engine;
  fig.style.margin = "0";
  const title = el("figcaption");
  const verdict = e.pair ? `${e.pair.verdict}${e.pair.class ? ` ${e.pair.class}` : ""}` : "no execution analysed";
  const strong = el("strong", undefined, info(e.engine).title);
  title.append(strong, ` — ${verdict}`);
  let lo = Infinity;
  let hi = -Infinity;
  let n = 0;
  for (const run of e.runs) {
    for (const t of run.times_ns ?? []) {
      lo = Math.min(lo, t);
      hi = Math.max(hi, t);
    }
    n = Math.max(n, run.times_ns?.length ?? 0);
  }
  const plot = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: "100%", role: "img", "aria-label": `${e.engine}: time per call against call number` });
  if (n > 0 && lo > 0) {
    if (hi / lo < 10) {
      // At least a decade, centred: a flat series looks flat.
      const mid = Math.sqrt(hi * lo);
      lo = mid / Math.sqrt(10);
      hi = mid * Math.sqrt(10);
    }
    const x = (i: number): number => PAD.left + (i / Math.max(1, n - 1)) * (W - PAD.left - PAD.right);
    const y = (t: number): number => PAD.top + (1 - (Math.log10(t) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (H - PAD.top - PAD.bottom);
    // The log axis: a tick and label at every power of ten inside the range, and at its ends.
    const all = [lo, hi];
    for (let p = Math.ceil(Math.log10(lo)); p <= Math.floor(Math.log10(hi)); p++) all.push(10 ** p);
    // Labels 12 px apart at least: the powers of ten first, an end only where it has room.
    const ticks: number[] = [];
    for (const t of [...all.slice(2), lo, hi]) if (ticks.every((u) => Math.abs(y(u) - y(t)) >= 12)) ticks.push(t);
    for (const t of ticks) {
      plot.append(svg("line", { x1: PAD.left, x2: W - PAD.right, y1: y(t), y2: y(t), stroke: "currentColor", "stroke-opacity": 0.12 }));
      const lab = svg("text", { x: PAD.left - 4, y: y(t) + 3, "text-anchor": "end", "font-size": 9, fill: "currentColor" });
      lab.textContent = duration(t);
      plot.append(lab);
    }
    const xl = svg("text", { x: W - PAD.right, y: H - 6, "text-anchor": "end", "font-size": 9, fill: "currentColor" });
    xl.textContent = `call ${thousands(n)} →`;
    plot.append(xl);
    e.runs.forEach((run, ri) => {
      const times = run.times_ns ?? [];
      if (!times.length) return;
      const color = RUN_COLORS[ri % RUN_COLORS.length] ?? "#444";
      // One point per pixel column at most: the column's median keeps the level, its max
      // the first calls' spikes.
      const cols = Math.min(times.length, W - PAD.left - PAD.right);
      const pts: string[] = [];
      for (let c = 0; c < cols; c++) {
        const a = Math.floor((c * times.length) / cols);
        const b = Math.max(a + 1, Math.floor(((c + 1) * times.length) / cols));
        const part = times.slice(a, b).sort((p, q) => p - q);
        const v = c === 0 ? (times[0] ?? 1) : (part[Math.floor(part.length / 2)] ?? 1);
        pts.push(`${x(a).toFixed(1)},${y(Math.max(v, lo)).toFixed(1)}`);
      }
      plot.append(svg("polyline", { points: pts.join(" "), fill: "none", stroke: color, "stroke-width": 1, "stroke-opacity": 0.8, class: "warmup-series" }));
      // Changepoints as light ticks along the top, not lines across the series; a series
      // cut in many places is said in words below instead.
      const cps = run.analysis?.changepoints ?? [];
      if (cps.length <= MAX_MARKED_CHANGEPOINTS) {
        for (const cp of cps) {
          plot.append(svg("line", { x1: x(cp), x2: x(cp), y1: PAD.top, y2: PAD.top + 10, stroke: color, "stroke-opacity": 0.5, class: "warmup-changepoint" }));
        }
      }
      const s = run.analysis?.steady_start ?? -1;
      if (s > 0) {
        plot.append(svg("line", { x1: x(s), x2: x(s), y1: PAD.top, y2: H - PAD.bottom, stroke: color, "stroke-width": 2, class: "warmup-steady" }));
      }
    });
  }
  const list = el("ol", "small warmup-runs");
  list.style.margin = "0.25rem 0 0 1.25rem";
  list.style.padding = "0";
  e.runs.forEach((run, ri) => {
    const li = el("li");
    li.style.color = RUN_COLORS[ri % RUN_COLORS.length] ?? "";
    const x = run.analysis;
    if (!x) {
      li.textContent = run.failure ?? run.error ?? "no analysis";
    } else {
      const steady = x.steady_start >= 0 ? `, median ${duration(x.steady_median_ns)}` : "";
      const load = run.setup && (run.setup.compile_ns > 0 || run.setup.instantiate_ns > 0)
        ? `, load: compile ${duration(run.setup.compile_ns)}, instantiate ${duration(run.setup.instantiate_ns)}` : "";
      const cps = x.changepoints.length > MAX_MARKED_CHANGEPOINTS ? `, ${x.changepoints.length} changepoints (not drawn)` : "";
      li.textContent = `${words(x)}${steady}${cps}; first ${duration(x.first_ns)}, first 10 ${duration(x.early_ns)}, worst 4 ${duration(x.worst_ns)}, average ${duration(x.average_ns)} (${thousands(x.samples)} samples, ${run.timer}${load})`;
    }
    li.className = "warmup-words";
    list.append(li);
  });
  fig.append(title, plot, list);
  return fig;
}
