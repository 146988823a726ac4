// The playground page: pick kernels, arguments and engines; run them in the browser and on
// the server, one cell at a time; see the gaps as a table and a chart.

import "./style.css";
import { fetchCatalogue, fetchHistory } from "./api";
import { mountBuildCacheNote } from "./buildcache";
import { tickElapsed } from "./elapsed";
import { type Bundle, type CellRun, type CellState, isBrowserEngine, namedArgs, runCell } from "./cells";
import { type CustomPanel, mountCustom } from "./custom";
import { renderChart } from "./chart";
import { mountCodeView } from "./code-view";
import { showDetails } from "./details";
import { appendGrouped, info, order, runs } from "./engines";
import { cellTime, forecast, record, serverCellTime } from "./forecast";
import { duration } from "./format";
import { failureKind } from "./failure";
import { type HistoryRow, normalize } from "./history";
import { toMarkdown } from "./markdown";
import { Grid, type Row } from "./results";
import { type Selection, articleArgs, checkInt, firstArgs, fromQuery, kernelArgs, toQuery, unknownNames } from "./selection";
import { type TableHooks, renderTable, updateRow } from "./table";
import { RunDoc, newBatch } from "./rundoc";
import { showStoredRun } from "./runview";
import { CompareView } from "./compare";
import { JITView } from "./jit";
import { type ResultsTab, mountResults } from "./results-tab";
import { mountWarmup } from "./warmup";
import { type FarmPlan, mountFarm } from "./farm";
import { renderLessons } from "./lessons";
import { BROWSER_ENGINES, type Catalogue, type Kernel, type Limit } from "./types";
import { $, button, el } from "./dom";

function readBundle(): Bundle {
  const text = document.getElementById("bundle")?.textContent ?? "{}";
  return { files: JSON.parse(text) as Record<string, string> };
}

interface App {
  cat: Catalogue;
  bundle: Bundle;
  sel: Selection;
  grid: Grid;
  /** Every cell measured, kept across changes of the selection and reloads. */
  doc: RunDoc;
  running: boolean;
  current?: CellRun;
  /** Closes the question a Run waits on (timedOutAsk), when Cancel is clicked. */
  asking?: () => void;
  history?: HistoryRow[];
  historyError?: string;
  /** The comparison with a saved run, redrawn with the table. */
  compare?: CompareView;
  /** The JIT on / off view, redrawn with the table. */
  jit?: JITView;
  /** The "Your kernel" tab, when the server builds user kernels. */
  custom?: CustomPanel;
  /** The share button and the Results tab, when the server keeps a results store. */
  stored?: ResultsTab;
  /** The table's rows sorted by an engine's times, when a header was clicked. */
  sort?: { engine: string; dir: 1 | -1 };
}

function browserEngines(bundle: Bundle): string[] {
  return BROWSER_ENGINES.filter((e) => e !== "browser-wasm" || bundle.files["kernels.wasm"]);
}

async function start(): Promise<void> {
  const bundle = readBundle();
  initTheme();
  // A stored run's page (/runs/N) is drawn by the same table, chart and details.
  if (document.body.dataset.page === "run") return showStoredRun();
  let cat: Catalogue;
  try {
    cat = await fetchCatalogue();
  } catch (err) {
    $("status").textContent = `Cannot load the catalogue: ${err instanceof Error ? err.message : String(err)}`;
    return;
  }
  const sel = fromQuery(location.search, cat, browserEngines(bundle));
  // A link that names what this server does not know: said, not silently dropped.
  const unknown = unknownNames(location.search, cat, browserEngines(bundle));
  $("url-note").textContent = unknown.length ? `This link names what the page does not know, left out: ${unknown.join("; ")}.` : "";
  const app: App = { cat, bundle, sel, grid: new Grid([], []), doc: RunDoc.load(Date.now()), running: false };
  app.compare = new CompareView($("compare"), () => app.grid);
  app.jit = new JITView($("jit"), () => app.grid);
  buildForm(app);
  app.custom = mountCustom(cat, bundle, { changed: () => changed(app), run: () => runAll(app) });
  app.stored = mountResults(cat);
  mountWarmup(cat);
  mountFarm(cat, $("ask"), () => farmPlan(app));
  buildPanels(cat);
  mountBuildCacheNote($("build-cache"), cat);
  tickElapsed();
  wireToolbar(app);
  $("isolation").textContent = crossOriginIsolated ? "cross-origin isolated: fine timers" : "not cross-origin isolated: coarse timers";
  $("isolation").classList.toggle("warn", !crossOriginIsolated);
  preview(app);
  // The engines' colours are fitted to the theme's background: redraw with them.
  const recolour = (): void => {
    for (const cb of document.querySelectorAll<HTMLInputElement>('input[name="engine"]')) {
      const sw = cb.parentElement?.querySelector<HTMLElement>(".swatch");
      if (sw) sw.style.background = info(cb.value).color;
    }
    redraw(app);
  };
  document.addEventListener("themechange", recolour);
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", recolour);
  let resize: number | undefined;
  window.addEventListener("resize", () => {
    clearTimeout(resize);
    resize = window.setTimeout(() => renderChart($("chart"), app.grid, app.sel.history ? app.history : undefined), 150);
  });
  // The articles' figures: their rows when asked for, their claims beside the lessons always.
  if (sel.history) await loadHistory(app);
  else void loadHistory(app).then(() => { if (!app.running) redraw(app); });
  mountCodeView(() => app.cat);
  document.body.dataset.ready = "1";
  if (new URLSearchParams(location.search).get("run") === "1") {
    // A reload of a run=1 link shows the run this selection made within the hour.
    if (app.doc.query === toQuery(app.sel) && app.doc.covers(runnableCells(app))) showKept(app);
    else startRun(app);
  } else if (app.doc.at > 0 && app.grid.measured()) {
    showKept(app);
  } else {
    // The table before any Run is the cells a Run will fill, said so.
    $("status").textContent = "Nothing measured yet: Run fills the table below, one cell at a time.";
  }
}

/** showKept says that the cells shown are a run's of earlier, with a button to run again. */
function showKept(app: App): void {
  const status = $("status");
  const when = new Date(app.doc.at);
  const mins = Math.max(0, Math.round((Date.now() - app.doc.at) / 60000));
  status.replaceChildren(`Shown: the cells measured at ${when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })} (${mins === 0 ? "just now" : `${mins} min ago`})`);
  if (app.doc.stored) status.append(", stored as ", storedLink(app.doc.stored));
  status.append(". ");
  const again = button("run-again", "Run again");
  again.onclick = () => void runAll(app);
  status.append(again);
}

/** storedLink links a stored run's own page. */
function storedLink(id: number): HTMLAnchorElement {
  const a = el("a", undefined, `run ${id}`);
  a.href = `/runs/${id}`;
  a.dataset.run = String(id);
  return a;
}

// ---- the form ---------------------------------------------------------------------------

function buildForm(app: App): void {
  const { cat, sel } = app;
  const kernelsHost = $("kernels-list");
  const groups = [...new Set(cat.kernels.map((k) => k.group))];
  kernelsHost.replaceChildren();
  for (const g of groups) {
    const box = el("div", "kernel-group");
    const title = el("h3", undefined, g);
    title.title = cat.articles[g] ?? "";
    box.append(title);
    for (const k of cat.kernels.filter((k) => k.group === g)) box.append(kernelRow(app, k));
    kernelsHost.append(box);
  }

  wireSizes(app);

  const enginesHost = $("engines-list");
  enginesHost.replaceChildren();
  const available = browserEngines(app.bundle);
  for (const e of order([...cat.engines, ...BROWSER_ENGINES])) {
    const lab = el("label", "engine-chip");
    const cb = document.createElement("input");
    cb.type = "checkbox";
    cb.name = "engine";
    cb.value = e;
    cb.checked = sel.engines.includes(e);
    cb.disabled = !cat.engines.includes(e) && !available.includes(e);
    if (cb.disabled) cb.dataset.absent = "1";
    const sw = el("span", "swatch");
    sw.style.background = info(e).color;
    lab.title = cb.disabled ? `${info(e).what} — not in this build` : info(e).what;
    lab.append(cb, sw, document.createTextNode(info(e).title));
    cb.onchange = () => {
      // The one engine toggled: those shown off on the "Your kernel" tab stay chosen.
      sel.engines = order(cb.checked ? [...new Set([...sel.engines, e])] : sel.engines.filter((x) => x !== e));
      changed(app);
    };
    appendGrouped(enginesHost, e, lab);
  }

  for (const [id, lim, key] of [
    ["runs", cat.runs, "runs"],
    ["warmup", cat.warmup, "warmup"],
    ["min_sample_ms", cat.min_sample_ms, "min_sample_ms"],
    ["warmup_ms", cat.warmup_ms, "warmup_ms"],
    ["limit_s", limitOf(cat), "limit_s"],
  ] as const) {
    const input = $<HTMLInputElement>(id);
    input.min = String(lim.min);
    input.max = String(lim.max);
    fitDigits(input, lim.min, lim.max);
    input.value = sel[key];
    input.oninput = () => {
      sel[key] = input.value;
      changed(app);
    };
  }
  $<HTMLFormElement>("form").onsubmit = (ev) => {
    ev.preventDefault();
    void (app.custom?.active() ? app.custom.buildAndRun() : startRun(app));
  };
  $<HTMLButtonElement>("cancel").onclick = () => cancel(app);
  validate(app);
}

/**
 * wireSizes offers the other set of sizes: the articles' (fib_rec(40), seconds a call on an
 * interpreter) when the page's first sizes are shown, and back.
 */
function wireSizes(app: App): void {
  const button = $<HTMLButtonElement>("sizes");
  const note = $("sizes-note");
  const sets = { first: firstArgs(app.cat), articles: articleArgs(app.cat) };
  const same = (a: Selection["args"]): boolean => app.cat.kernels.every((k) => k.params.every((p) => app.sel.args[k.name]?.[p.name] === a[k.name]?.[p.name]));
  const label = (): void => {
    const atArticles = same(sets.articles);
    button.textContent = atArticles ? "The first Run's sizes" : "The articles' sizes";
    note.textContent = atArticles ? "the articles' sizes: a Run takes minutes, an interpreter may time out" : same(sets.first) ? "small sizes, for a first Run in seconds" : "";
  };
  button.onclick = () => {
    const to = same(sets.articles) ? sets.first : sets.articles;
    for (const k of app.cat.kernels) {
      for (const p of k.params) {
        const v = to[k.name]![p.name]!;
        (app.sel.args[k.name] ??= {})[p.name] = v;
        const input = document.querySelector<HTMLInputElement>(`input[name="${k.name}.${p.name}"]`);
        if (input) input.value = v;
      }
    }
    changed(app);
  };
  label();
  relabelSizes = label;
}

/** relabelSizes names the sizes button after the arguments changed. */
let relabelSizes = (): void => {};

function kernelRow(app: App, k: Kernel): HTMLElement {
  const { sel } = app;
  const row = el("div", "kernel");
  row.dataset.kernel = k.name;
  const lab = document.createElement("label");
  const cb = document.createElement("input");
  cb.type = "checkbox";
  cb.name = "kernel";
  cb.value = k.name;
  cb.checked = sel.kernels.includes(k.name);
  const name = el("code", undefined, k.name);
  lab.append(cb, name);
  lab.title = k.summary;
  const params = el("span", "params");
  for (const p of k.params) {
    const pl = el("label", "param");
    pl.title = `${p.doc}: ${p.min} to ${p.max}`;
    const input = document.createElement("input");
    input.type = "number";
    input.inputMode = "numeric";
    input.name = `${k.name}.${p.name}`;
    input.min = String(p.min);
    input.max = String(p.max);
    input.step = "1";
    fitDigits(input, p.min, p.max);
    input.value = sel.args[k.name]?.[p.name] ?? String(p.default);
    input.oninput = () => {
      (sel.args[k.name] ??= {})[p.name] = input.value;
      changed(app);
    };
    pl.append(document.createTextNode(`${p.name} `), input);
    params.append(pl);
  }
  const err = el("div", "field-error");
  err.setAttribute("aria-live", "polite");
  cb.onchange = () => {
    const chosen = new Set([...document.querySelectorAll<HTMLInputElement>('input[name="kernel"]:checked')].map((i) => i.value));
    sel.kernels = app.cat.kernels.map((kk) => kk.name).filter((n) => chosen.has(n));
    changed(app);
  };
  row.title = k.summary;
  row.append(lab, params, err);
  return row;
}

/** fitDigits widens a number input to show its widest allowed value whole. */
function fitDigits(input: HTMLInputElement, min: number, max: number): void {
  input.style.setProperty("--digits", String(Math.max(String(min).length, String(max).length)));
}

/**
 * markEngines shows, on the "Your kernel" tab, only the engines that run a user's kernel
 * ticked, the others off with why; on the articles' tab, the selection as it is.
 */
function markEngines(app: App): void {
  const custom = app.custom?.active() ?? false;
  const can = new Set(custom ? app.custom!.engines(order([...app.cat.engines, ...BROWSER_ENGINES])) : []);
  for (const cb of document.querySelectorAll<HTMLInputElement>('input[name="engine"]')) {
    const off = custom && !can.has(cb.value);
    cb.disabled = cb.dataset.absent === "1" || off;
    cb.checked = app.sel.engines.includes(cb.value) && !off;
    const chip = cb.closest<HTMLElement>(".engine-chip");
    if (chip) {
      chip.classList.toggle("off-tab", off);
      chip.title = off ? `${info(cb.value).what} — runs the articles' kernels only` : cb.dataset.absent ? `${info(cb.value).what} — not in this build` : info(cb.value).what;
    }
  }
  let note = document.getElementById("engines-note");
  if (!note) {
    note = el("p", "muted small");
    note.id = "engines-note";
    $("engines-list").after(note);
  }
  note.textContent = custom
    ? `Your kernel runs on ${[...can].map((e) => info(e).title).join(", ")}: a user's Go source is built to WebAssembly and runs sandboxed (yaegi with a restricted symbol table); native code and the other languages run the articles' kernels only.`
    : "";
}

/** validate marks the form's problems; it returns whether everything is in range. */
function validate(app: App): boolean {
  const { cat, sel } = app;
  markEngines(app);
  let ok = true;
  for (const k of cat.kernels) {
    const row = document.querySelector<HTMLElement>(`.kernel[data-kernel="${k.name}"]`);
    if (!row) continue;
    const { errors } = kernelArgs(k, sel);
    const msgs = Object.values(errors);
    for (const p of k.params) {
      const input = row.querySelector<HTMLInputElement>(`input[name="${k.name}.${p.name}"]`);
      input?.setAttribute("aria-invalid", errors[p.name] ? "true" : "false");
    }
    const box = row.querySelector<HTMLElement>(".field-error");
    if (box) box.textContent = msgs.join("; ");
    if (msgs.length && sel.kernels.includes(k.name)) ok = false;
  }
  for (const [id, lim] of [
    ["runs", cat.runs],
    ["warmup", cat.warmup],
    ["min_sample_ms", cat.min_sample_ms],
    ["warmup_ms", cat.warmup_ms],
    ["limit_s", limitOf(cat)],
  ] as const) {
    const r = checkSetting(id, sel[id], lim);
    $(id).setAttribute("aria-invalid", r.error ? "true" : "false");
    $(`${id}-error`).textContent = r.error ?? "";
    if (r.error) ok = false;
  }
  const nothing = (!app.custom?.active() && sel.kernels.length === 0) || enginesOf(app).length === 0;
  $("form-note").textContent = nothing
    ? "Pick at least one kernel and one engine."
    : ok
      ? `${plural(cellCount(app), "cell")}, run one at a time${estimate(app)}.`
      : "Some values are out of range: the page runs them anyway, so you can see the server refuse them.";
  $<HTMLButtonElement>("run").disabled = nothing || app.running;
  showForecasts(app);
  return ok;
}

/**
 * showForecasts names, before Run, the cells this browser's last runs expect to fail or to
 * overrun the time limit, each with a button for arguments that ran, when some did.
 */
function showForecasts(app: App): void {
  const host = $("forecast");
  host.replaceChildren();
  if (app.custom?.active() || app.running) return;
  const calls = {
    runs: Number(app.sel.runs) || 1,
    warmup: Number(app.sel.warmup) || 0,
    minSampleMs: Number(app.sel.min_sample_ms) || 0,
    timeoutMs: limitMs(app),
  };
  for (const row of rowsOf(app)) {
    if (row.invalid) continue;
    const k = row.kernel;
    for (const engine of enginesOf(app)) {
      const f = forecast(k.name, engine, row.args, calls);
      if (!f) continue;
      const li = el("li", undefined, `${row.label} on ${info(engine).title} is expected to fail: ${f.why}.`);
      li.dataset.kernel = k.name;
      li.dataset.engine = engine;
      if (f.fits) {
        const fits = f.fits;
        const b = el("button", "ghost fits", `Use ${k.name}(${fits.join(", ")}), which ran`);
        b.type = "button";
        b.onclick = () => {
          k.params.forEach((p, i) => {
            (app.sel.args[k.name] ??= {})[p.name] = String(fits[i]);
            const input = document.querySelector<HTMLInputElement>(`input[name="${k.name}.${p.name}"]`);
            if (input) input.value = String(fits[i]);
          });
          changed(app);
        };
        li.append(" ", b);
      }
      host.append(li);
    }
  }
}

/** limitOf bounds the per-cell time limit, in seconds: a second up to the server's own. */
function limitOf(cat: Catalogue): Limit {
  const most = Math.max(1, Math.round(cat.timeout_ns / 1e9));
  return { default: most, min: 1, max: most };
}

/** farmPlan is the Run's plan for the bench farm: its kernels with their arguments, its
 * server engines and its settings, as the form stands (the server checks them). */
function farmPlan(app: App): FarmPlan {
  const args: Record<string, number> = {};
  const rows = rowsOf(app);
  for (const row of rows) row.kernel.params.forEach((p, i) => (args[`${row.kernel.name}.${p.name}`] = row.args[i]!));
  return {
    kernels: rows.map((r) => r.kernel.name),
    engines: app.sel.engines.filter((e) => app.cat.engines.includes(e)),
    args,
    runs: Number(app.sel.runs),
    warmup: Number(app.sel.warmup),
    min_sample_ms: Number(app.sel.min_sample_ms),
    warmup_ms: Number(app.sel.warmup_ms),
    timeout_ms: limitMs(app),
  };
}

/** limitMs is the per-cell time limit chosen, in ms (the server's when it is not a number in range). */
function limitMs(app: App): number {
  const r = checkSetting("limit_s", app.sel.limit_s, limitOf(app.cat));
  return r.error ? app.cat.timeout_ns / 1e6 : r.value * 1000;
}

/**
 * cellForecastMs is how long a cell is expected to take, in ms: from this browser's last
 * run of it, else, for a server cell, from this server's stored runs (POST /api/forecast);
 * undefined when neither knows it. A forecast is of this cell only: never a guess from
 * another kernel's or engine's time.
 */
function cellForecastMs(app: App, row: Row, engine: string): number | undefined {
  if (app.custom?.active()) return undefined;
  const timeoutMs = limitMs(app);
  const t = cellTime(row.kernel.name, engine, row.args, timeoutMs);
  if (t !== undefined || isBrowserEngine(engine) || row.invalid) return t;
  const serverMs = app.cat.timeout_ns / 1e6;
  return serverCellTime(
    {
      kernel: row.kernel.name,
      engine,
      args: namedArgs(row.kernel, row.args),
      runs: Number(app.sel.runs),
      warmup: Number(app.sel.warmup),
      min_sample_ms: Number(app.sel.min_sample_ms),
      warmup_ms: Number(app.sel.warmup_ms),
      timeout_ms: timeoutMs < serverMs ? timeoutMs : undefined,
    },
    () => { if (!app.running) validate(app); },
  );
}

/** estimate says how long the selection will take, when every cell's time is known
 * (cellForecastMs): "; about 40 s, from the runs made here before", else "". */
function estimate(app: App): string {
  const cells = runnableCells(app);
  const left = timeLeft(cells.map((c) => cellForecastMs(app, c.row, c.engine)));
  return left === undefined ? "" : `; about ${approx(left)}, from the runs made here before`;
}

/** timeLeft sums the forecasts of the cells still to run, or is undefined when one is not
 * known: a cheap cell's time says nothing of a costly one's. */
function timeLeft(forecasts: (number | undefined)[]): number | undefined {
  if (forecasts.length === 0 || forecasts.some((f) => f === undefined)) return undefined;
  return forecasts.reduce<number>((a, f) => a + f!, 0);
}

/** expectedToFail lists the selection's cells this browser's last runs expect to fail or to
 * run past the time limit, with why. */
function expectedToFail(app: App): { row: Row; engine: string; why: string }[] {
  if (app.custom?.active()) return [];
  const calls = { runs: Number(app.sel.runs) || 1, warmup: Number(app.sel.warmup) || 0, minSampleMs: Number(app.sel.min_sample_ms) || 0, timeoutMs: limitMs(app) };
  const out: { row: Row; engine: string; why: string }[] = [];
  for (const { row, engine } of runnableCells(app)) {
    if (row.invalid) continue;
    const f = forecast(row.kernel.name, engine, row.args, calls);
    if (f) out.push({ row, engine, why: f.why });
  }
  return out;
}

/**
 * startRun runs the selection, first asking, beside Run, about the cells expected to fail or
 * to run past the time limit: run them too, or skip them.
 */
function startRun(app: App): void {
  const doomed = expectedToFail(app);
  if (doomed.length === 0) {
    $("ask").replaceChildren();
    void runAll(app);
    return;
  }
  const names = doomed.map((d) => `${d.row.label} on ${info(d.engine).title}`).join(", ");
  const question = askFirst(`${plural(doomed.length, "cell")} expected to fail or to run past the ${approx(limitMs(app))} limit: ${names}. `, doomed.length);
  void question.answer.then((all) => runAll(app, all ? undefined : new Set(doomed.map((d) => RunDoc.key(d.row, d.engine)))));
}

/**
 * askFirst asks, beside Run, whether to run count cells it names in text: "Run them too"
 * (#ask-all) answers true, "Skip them" (#ask-skip) false, as does close (a Cancel). With a
 * Run's bar, the question is in the floating bar and the status too, where the user looks.
 */
function askFirst(text: string, count: number, bar?: RunBar): { answer: Promise<boolean>; close(): void } {
  const ask = $("ask");
  let settle: (all: boolean) => void = () => {};
  const answer = new Promise<boolean>((resolve) => {
    settle = (all) => {
      ask.replaceChildren();
      bar?.ask("", []);
      resolve(all);
    };
  });
  const buttons = (id: string): HTMLButtonElement[] => {
    const all = button(`${id}-all`, "Run them too");
    all.onclick = () => settle(true);
    const skip = button(`${id}-skip`, `Skip ${count === 1 ? "it" : "them"}`);
    skip.onclick = () => settle(false);
    return [all, skip];
  };
  const [all, skip] = buttons("ask");
  ask.replaceChildren(text, all!, " ", skip!);
  if (bar) {
    bar.ask(text, buttons("runbar-ask"));
    $("status").textContent = `Waiting for your answer: ${text}`;
  }
  return { answer, close: () => settle(false) };
}

/**
 * timedOutAsk asks, once a cell of row timed out, about the cells of the same row this Run
 * has still to start (its kernel's other tiers, most likely as slow): each would take the
 * whole limit. Skipped, their keys join skip.
 */
async function timedOutAsk(app: App, grid: Grid, r: number, after: string, outcome: CellState, skip: Set<string>, bar: RunBar): Promise<void> {
  if (outcome.kind !== "done" || !outcome.result.failure) return;
  const kind = failureKind(outcome.result.failure);
  if (!kind.startsWith("timed out")) return;
  const row = grid.rows[r]!;
  const rest = grid.engines.slice(grid.engines.indexOf(after) + 1).filter((e) => grid.get(r, e).kind !== "na" && !skip.has(RunDoc.key(row, e)));
  if (rest.length === 0 || !app.running) return;
  const q = askFirst(
    `${row.label} ${kind} on ${info(after).title}; its ${rest.length === 1 ? "other cell" : plural(rest.length, "other cell")} (${rest.map((e) => info(e).title).join(", ")}) may too, up to ${approx(rest.length * limitMs(app))} in all. `,
    rest.length,
    bar,
  );
  app.asking = q.close;
  const all = await q.answer;
  app.asking = undefined;
  if (!all) for (const e of rest) skip.add(RunDoc.key(row, e));
}

/** checkSetting validates runs, warmup, min_sample_ms, warmup_ms or limit_s against the catalogue's bounds. */
function checkSetting(name: "runs" | "warmup" | "min_sample_ms" | "warmup_ms" | "limit_s", text: string, lim: Limit): { value: number; error?: string } {
  const r = checkInt(text, name, lim.min, lim.max);
  if (r.error && name === "min_sample_ms") r.error += " ms (0: one call per sample)";
  if (r.error && name === "warmup_ms") r.error += " ms (0: the warm-up calls alone)";
  return r;
}

/** plural writes a count with its noun: "1 cell", "2 cells". */
function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function changed(app: App): void {
  validate(app);
  relabelSizes();
  history.replaceState(null, "", `?${toQuery(app.sel)}${app.custom?.fragment() ?? ""}`);
  if (!app.running) preview(app);
}

// ---- running ----------------------------------------------------------------------------

/** cellCount is the cells a run of the selection measures: not those of a kernel an engine
 * does not run (host_call off kernels.wasm), which read n/a. */
function cellCount(app: App): number {
  const engines = enginesOf(app);
  if (app.custom?.active()) return engines.length;
  return app.cat.kernels
    .filter((k) => app.sel.kernels.includes(k.name))
    .reduce((n, k) => n + engines.filter((e) => runs(k, e)).length, 0);
}

function rowsOf(app: App): Row[] {
  if (app.custom?.active()) return app.custom.rows();
  return app.cat.kernels
    .filter((k) => app.sel.kernels.includes(k.name))
    .map((k) => {
      const { args, errors } = kernelArgs(k, app.sel);
      return Grid.row(k, args, Object.values(errors)[0]);
    });
}

function tableHooks(app: App): TableHooks {
  return {
    details: (r: number, e: string) => showDetails($<HTMLDialogElement>("details"), app.grid, r, e),
    sort: app.sort,
    sortBy: (engine: string) => {
      // Fastest first, then slowest first, then as chosen.
      app.sort = app.sort?.engine !== engine ? { engine, dir: 1 } : app.sort.dir === 1 ? { engine, dir: -1 } : undefined;
      redraw(app);
    },
  };
}

/** enginesOf is the selected engines, in order (those that run user kernels, on that tab). */
function enginesOf(app: App): string[] {
  const engines = order(app.sel.engines);
  return app.custom?.active() ? app.custom.engines(engines) : engines;
}

/** runnableCells lists the selection's cells a Run measures (not those that read n/a). */
function runnableCells(app: App): { row: Row; engine: string }[] {
  const out: { row: Row; engine: string }[] = [];
  for (const row of rowsOf(app)) for (const engine of enginesOf(app)) if (runs(row.kernel, engine)) out.push({ row, engine });
  return out;
}

/** preview shows the grid of the current selection: the cells measured (the run
 * document's), the others idle. */
function preview(app: App): void {
  const grid = new Grid(rowsOf(app), enginesOf(app), "idle");
  grid.requestedRuns = app.doc.requestedRuns;
  if (app.doc.warmupMs) grid.warmupMs = app.doc.warmupMs;
  grid.rows.forEach((row, r) => {
    for (const e of grid.engines) {
      const s = app.doc.get(row, e);
      if (s && grid.get(r, e).kind !== "na") grid.set(r, e, s);
    }
  });
  app.grid = grid;
  redraw(app);
}

function redraw(app: App): void {
  app.grid.base = app.sel.base;
  fillBaseChoice(app);
  // The footnote names the engine the × is taken against (a user's kernel has no native).
  const base = app.grid.rows.map((_, r) => app.grid.baseline(r)).find((b) => b !== undefined) ?? $<HTMLSelectElement>("baseline").value;
  $("base-name").textContent = base ? `${info(base).title}${base === app.sel.base ? " (the engine chosen above)" : ""}` : "the engine chosen above";
  app.compare?.render();
  app.jit?.render();
  renderTable($("table"), app.grid, tableHooks(app), app.sel.history ? app.history : undefined);
  renderLessons($("lessons"), app.grid, app.history);
  renderChart($("chart"), app.grid, app.sel.history ? app.history : undefined);
}

/**
 * runAll runs the selection's cells one at a time, but those in skip (RunDoc keys), which
 * keep what they showed.
 */
async function runAll(app: App, skipped?: Set<string>): Promise<void> {
  if (app.running) return;
  // Grown while the Run goes on: the cells of a row whose first cell timed out, if so answered.
  const skip = new Set(skipped);
  validate(app);
  const runs = Number(app.sel.runs);
  const warmup = Number(app.sel.warmup);
  const minSampleMs = Number(app.sel.min_sample_ms);
  const warmupMs = Number(app.sel.warmup_ms);
  // The page's own check of runs, warm-up, the sample's minimum and the warm-up's, for the
  // browser cells (the server checks its own).
  const badCount =
    checkSetting("runs", app.sel.runs, app.cat.runs).error ??
    checkSetting("warmup", app.sel.warmup, app.cat.warmup).error ??
    checkSetting("min_sample_ms", app.sel.min_sample_ms, app.cat.min_sample_ms).error ??
    checkSetting("warmup_ms", app.sel.warmup_ms, app.cat.warmup_ms).error ??
    checkSetting("limit_s", app.sel.limit_s, limitOf(app.cat)).error;
  const grid = new Grid(rowsOf(app), enginesOf(app));
  grid.requestedRuns = runs;
  grid.warmupMs = warmupMs;
  app.grid = grid;
  app.running = true;
  const doc = app.doc;
  doc.query = toQuery(app.sel);
  doc.requestedRuns = runs;
  doc.warmupMs = warmupMs;
  doc.stored = undefined;
  const batch = newBatch();
  // The time limit of this Run's cells, as chosen when it started.
  const timeoutMs = limitMs(app);
  const serverMs = app.cat.timeout_ns / 1e6;
  document.body.dataset.running = "1";
  $<HTMLButtonElement>("run").disabled = true;
  $<HTMLButtonElement>("cancel").disabled = false;
  redraw(app);
  const hooks = tableHooks(app);
  const host = $("table");
  const started = performance.now();
  const total = [...grid.cells.values()].filter((s) => s.kind !== "na").length;
  // Each cell's own forecast, in the Run's order: the time left is theirs, never a
  // cheap cell's time stretched over a costly one.
  const forecasts: (number | undefined)[] = [];
  grid.rows.forEach((row, r) => {
    for (const e of grid.engines) if (grid.get(r, e).kind !== "na") forecasts.push(cellForecastMs(app, row, e));
  });
  const bar = runBar(app);
  let n = 0;
  outer: for (let r = 0; r < grid.rows.length; r++) {
    const row = grid.rows[r]!;
    for (const engine of grid.engines) {
      if (!app.running) break outer;
      if (grid.get(r, engine).kind === "na") continue; // a kernel this engine does not run
      n++;
      $("status").textContent = `Running ${n} of ${total}: ${row.label} on ${info(engine).title}…`;
      bar.show(n - 1, total, timeLeft(forecasts.slice(n - 1)));
      if (badCount && isBrowserEngine(engine)) {
        grid.set(r, engine, { kind: "error", message: badCount });
        updateRow(host, grid, r, hooks);
        continue;
      }
      const update = (s: CellState): void => {
        if (app.grid !== grid || !app.running) return;
        grid.set(r, engine, s);
        updateRow(host, grid, r, hooks);
      };
      if (skip.has(RunDoc.key(row, engine))) {
        grid.set(r, engine, doc.get(row, engine) ?? { kind: "cancelled" });
        updateRow(host, grid, r, hooks);
        continue;
      }
      const job = { kernel: row.kernel, args: row.args, engine, runs, warmup, minSampleMs, warmupMs, batch, timeoutMs: timeoutMs < serverMs ? timeoutMs : undefined };
      const cellStarted = performance.now();
      const run = app.custom?.active() ? app.custom.runCell(job, timeoutMs, update) : runCell(job, app.bundle, timeoutMs, update);
      app.current = run;
      const outcome = await run.done;
      app.current = undefined;
      if (app.grid !== grid) return;
      if (!app.custom?.active()) record(row.kernel.name, engine, row.args, outcome, performance.now() - cellStarted);
      grid.set(r, engine, outcome);
      doc.set(row, engine, outcome);
      if (outcome.kind === "done" && outcome.result.run) doc.stored = outcome.result.run;
      doc.at = Date.now();
      doc.save();
      updateRow(host, grid, r, hooks);
      renderLessons($("lessons"), grid, app.history);
      renderChart($("chart"), grid, app.sel.history ? app.history : undefined);
      bar.show(n, total, timeLeft(forecasts.slice(n)));
      await timedOutAsk(app, grid, r, engine, outcome, skip, bar);
    }
  }
  const cancelled = !app.running;
  const elapsed = duration((performance.now() - started) * 1e6);
  // The browser cells join the Run's stored run, so that it holds what the page showed.
  const stored = app.stored ? await app.stored.ran(grid, { runs, warmup, minSampleMs }, batch) : undefined;
  if (stored?.run) doc.stored = stored.run;
  doc.save();
  // A cell the Run did not reach keeps what an earlier Run measured.
  grid.rows.forEach((row, r) => {
    for (const e of grid.engines) {
      const k = grid.get(r, e).kind;
      if (k === "pending" || k === "queued" || k === "running") grid.set(r, e, doc.get(row, e) ?? { kind: "cancelled" });
    }
  });
  app.running = false;
  document.body.dataset.running = "0";
  redraw(app);
  $<HTMLButtonElement>("cancel").disabled = true;
  validate(app);
  const status = $("status");
  status.textContent = cancelled ? `Cancelled after ${plural(n, "cell")} of ${total}` : `Done — results below: ${plural(total, "cell")} in ${elapsed}`;
  if (doc.stored) status.append(", stored as ", storedLink(doc.stored));
  if (stored?.error) status.append(` (this browser's ${plural(stored.cells, "cell")} not stored: ${stored.error})`);
  else if (doc.stored && stored?.cells) status.append(" with this browser's cells");
  status.append(".");
  bar.finish(cancelled ? "Cancelled." : `Done — results below: ${plural(total, "cell")} in ${elapsed}.`);
}

/** The run bar: where a Run stands, beside Run and, while Run is out of sight, fixed to
 * the viewport with its own Cancel; a question the Run waits on is asked in both. */
interface RunBar {
  /** show says how far the Run is: done of total cells, with the time left when known. */
  show(done: number, total: number, leftMs: number | undefined): void;
  /** ask puts a question's text and buttons in the floating bar too (ask("") removes it). */
  ask(text: string, buttons: HTMLButtonElement[]): void;
  /** finish ends the Run's bar: the floating bar says text until the results are in view. */
  finish(text: string): void;
}

/**
 * runBar shows a Run's progress beside Run ("3 of 10 cells, about 8 s left") and, while
 * Run is out of sight, in a bar fixed to the viewport; at the end it says the Run is done
 * where the user looks, until the results are in view.
 */
function runBar(app: App): RunBar {
  const near = $("progress");
  const floating = $("runbar");
  const text = $("runbar-text");
  const asking = $("runbar-ask");
  const cancelButton = $<HTMLButtonElement>("runbar-cancel");
  const show = $<HTMLButtonElement>("runbar-show");
  cancelButton.hidden = false;
  show.hidden = true;
  cancelButton.onclick = () => cancel(app);
  show.onclick = () => $("results").scrollIntoView({ block: "start" });
  asking.replaceChildren();
  let runInView = true;
  let tableInView = false;
  let finished = false;
  const place = (): void => {
    floating.hidden = finished ? tableInView : runInView && asking.childElementCount === 0;
  };
  const io = new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (e.target.id === "run") runInView = e.isIntersecting;
      else tableInView = e.isIntersecting;
    }
    place();
  });
  io.observe($("run"));
  io.observe($("table"));
  return {
    show(done, total, leftMs) {
      const t = `${done} of ${plural(total, "cell")}${leftMs !== undefined ? `, about ${approx(leftMs)} left` : ""}`;
      near.textContent = t;
      text.textContent = t;
      place();
    },
    ask(question, buttons) {
      if (question === "") asking.replaceChildren();
      else asking.replaceChildren(question, ...buttons);
      text.hidden = question !== "";
      place();
    },
    finish(t) {
      finished = true;
      near.textContent = "";
      asking.replaceChildren();
      text.hidden = false;
      text.textContent = t;
      cancelButton.hidden = true;
      show.hidden = false;
      place();
      // Once the results have been seen, the bar has said what it had to.
      const seen = new IntersectionObserver((entries) => {
        if (entries.some((e) => e.isIntersecting)) {
          floating.hidden = true;
          seen.disconnect();
          io.disconnect();
        }
      });
      seen.observe($("table"));
    },
  };
}

/** approx writes a time left as a person says it: "40 s", "3 min". */
function approx(ms: number): string {
  const s = ms / 1000;
  return s < 90 ? `${Math.max(1, Math.round(s))} s` : `${Math.round(s / 60)} min`;
}

function cancel(app: App): void {
  if (!app.running) return;
  app.running = false;
  app.current?.cancel();
  app.asking?.();
  $("status").textContent = "Cancelling…";
}

/** fillBaseChoice offers the shown engines as the × column's base, the chosen one selected. */
function fillBaseChoice(app: App): void {
  const select = $<HTMLSelectElement>("baseline");
  const engines = app.grid.engines;
  const names = [...select.options].map((o) => o.value);
  if (names.join() !== engines.join()) select.replaceChildren(...engines.map((e) => new Option(info(e).title, e)));
  select.value = engines.includes(app.sel.base) ? app.sel.base : (app.grid.baseline(0) ?? engines[0] ?? "");
  select.onchange = () => {
    app.sel.base = select.value;
    history.replaceState(null, "", `?${toQuery(app.sel)}${app.custom?.fragment() ?? ""}`);
    redraw(app);
  };
}

// ---- toolbar, history, panels, theme ----------------------------------------------------

function wireToolbar(app: App): void {
  const hist = $<HTMLInputElement>("history");
  hist.checked = app.sel.history;
  hist.onchange = async () => {
    app.sel.history = hist.checked;
    changed(app);
    if (hist.checked && !app.history) await loadHistory(app);
    redraw(app);
  };
  $("copy").onclick = async () => {
    // What is measured: the rows and engines with an outcome, never idle cells.
    const measured = app.grid.measured();
    const note = $("copy-note");
    if (!measured) {
      note.textContent = "Nothing measured yet: Run first.";
      setTimeout(() => (note.textContent = ""), 2500);
      return;
    }
    const md = toMarkdown(measured, firstServerEnv(measured), app.sel.history ? app.history : undefined);
    try {
      await navigator.clipboard.writeText(md);
      note.textContent = "Copied.";
    } catch {
      const dialog = $<HTMLDialogElement>("markdown");
      $<HTMLTextAreaElement>("markdown-text").value = md;
      dialog.showModal();
      $<HTMLTextAreaElement>("markdown-text").select();
      note.textContent = "";
    }
    setTimeout(() => (note.textContent = ""), 2500);
  };
  for (const d of document.querySelectorAll<HTMLDialogElement>("dialog")) {
    d.addEventListener("click", (ev) => {
      if (ev.target === d) d.close(); // a click on the backdrop
    });
  }
}

function firstServerEnv(grid: Grid) {
  for (const s of grid.cells.values()) if (s.kind === "done" && s.result.server) return s.result.server;
  return undefined;
}

async function loadHistory(app: App): Promise<void> {
  try {
    app.history = normalize(await fetchHistory());
    app.historyError = undefined;
  } catch (err) {
    app.history = [];
    app.historyError = err instanceof Error ? err.message : String(err);
  }
  $("history-note").textContent = app.historyError ? `(unavailable: ${app.historyError})` : "";
}

function buildPanels(cat: Catalogue): void {
  let any = false;
  for (const name of ["chat", "load"]) {
    const panel = $(`${name}-panel`);
    const on = cat.panels[name] === true;
    panel.hidden = !on;
    if (on) {
      any = true;
      const frame = panel.querySelector("iframe");
      if (frame) {
        frame.src = `/${name}/`;
        if (name === "load") fitFrame(frame);
      }
    }
  }
  $("panels").hidden = !any;
  document.body.classList.toggle("with-panels", any);
}

/**
 * fitFrame makes a same-origin frame as tall as its page, so that what it shows (the load
 * panel's whole result) needs no scroll of its own.
 */
function fitFrame(frame: HTMLIFrameElement): void {
  let observer: ResizeObserver | undefined;
  frame.addEventListener("load", () => {
    observer?.disconnect();
    const doc = frame.contentDocument;
    if (!doc?.documentElement) return;
    // The bottom of its content, not its scroll height: a page as tall as its window
    // would grow with the frame, and the frame with it.
    const fit = (): void => {
      const bottom = Math.max(0, ...[...(doc.body?.children ?? [])].map((e) => e.getBoundingClientRect().bottom + (frame.contentWindow?.scrollY ?? 0)));
      frame.style.height = `${Math.max(420, Math.ceil(bottom) + 16)}px`;
    };
    observer = new ResizeObserver(fit);
    observer.observe(doc.documentElement);
    if (doc.body) observer.observe(doc.body);
    fit();
  });
}

type Theme = "auto" | "light" | "dark";

function initTheme(): void {
  const button = $<HTMLButtonElement>("theme");
  const apply = (t: Theme): void => {
    document.documentElement.dataset.theme = t;
    button.textContent = t === "auto" ? "◐ auto" : t === "light" ? "☀ light" : "☾ dark";
    button.setAttribute("aria-label", `colour theme: ${t}`);
    document.dispatchEvent(new Event("themechange"));
  };
  let theme = (localStorage.getItem("wasmgap-theme") as Theme | null) ?? "auto";
  apply(theme);
  button.onclick = () => {
    // The first click always changes what is seen: from auto to the scheme it is not showing.
    const dark = matchMedia("(prefers-color-scheme: dark)").matches;
    const first: Theme = dark ? "light" : "dark";
    const second: Theme = dark ? "dark" : "light";
    theme = theme === "auto" ? first : theme === first ? second : "auto";
    localStorage.setItem("wasmgap-theme", theme);
    apply(theme);
  };
}

void start();
