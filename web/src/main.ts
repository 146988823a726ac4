// The playground page: pick kernels, arguments and engines; run them in the browser and on
// the server, one cell at a time; see the gaps as a table and a chart.

import "./style.css";
import { fetchCatalogue, fetchHistory } from "./api";
import { type Bundle, type CellRun, type CellState, isBrowserEngine, runCell } from "./cells";
import { type CustomPanel, mountCustom } from "./custom";
import { renderChart } from "./chart";
import { mountCodeView } from "./code-view";
import { showDetails } from "./details";
import { appendGrouped, info, order, runs } from "./engines";
import { forecast, record } from "./forecast";
import { duration } from "./format";
import { type HistoryRow, normalize } from "./history";
import { toMarkdown } from "./markdown";
import { Grid, type Row } from "./results";
import { type Selection, checkInt, fromQuery, kernelArgs, toQuery, unknownNames } from "./selection";
import { renderTable, updateRow } from "./table";
import { CompareView } from "./compare";
import { JITView } from "./jit";
import { type ResultsTab, mountResults } from "./results-tab";
import { BROWSER_ENGINES, type Catalogue, type Kernel, type Limit } from "./types";

const $ = <T extends HTMLElement>(id: string): T => {
  const e = document.getElementById(id);
  if (!e) throw new Error(`the page lacks #${id}`);
  return e as T;
};

function readBundle(): Bundle {
  const text = document.getElementById("bundle")?.textContent ?? "{}";
  return { files: JSON.parse(text) as Record<string, string> };
}

interface App {
  cat: Catalogue;
  bundle: Bundle;
  sel: Selection;
  grid: Grid;
  running: boolean;
  current?: CellRun;
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
}

function browserEngines(bundle: Bundle): string[] {
  return BROWSER_ENGINES.filter((e) => e !== "browser-wasm" || bundle.files["kernels.wasm"]);
}

async function start(): Promise<void> {
  const bundle = readBundle();
  initTheme();
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
  const app: App = { cat, bundle, sel, grid: new Grid([], []), running: false };
  app.compare = new CompareView($("compare"), () => app.grid);
  app.jit = new JITView($("jit"), () => app.grid);
  buildForm(app);
  app.custom = mountCustom(cat, bundle, { changed: () => changed(app), run: () => runAll(app) });
  app.stored = mountResults(cat);
  buildPanels(cat);
  wireToolbar(app);
  $("isolation").textContent = crossOriginIsolated ? "cross-origin isolated: fine timers" : "not cross-origin isolated: coarse timers";
  $("isolation").classList.toggle("warn", !crossOriginIsolated);
  preview(app);
  let resize: number | undefined;
  window.addEventListener("resize", () => {
    clearTimeout(resize);
    resize = window.setTimeout(() => renderChart($("chart"), app.grid, app.sel.history ? app.history : undefined), 150);
  });
  if (sel.history) await loadHistory(app);
  mountCodeView(() => app.cat.engines);
  document.body.dataset.ready = "1";
  if (new URLSearchParams(location.search).get("run") === "1") void runAll(app);
}

// ---- the form ---------------------------------------------------------------------------

function buildForm(app: App): void {
  const { cat, sel } = app;
  const kernelsHost = $("kernels-list");
  const groups = [...new Set(cat.kernels.map((k) => k.group))];
  kernelsHost.replaceChildren();
  for (const g of groups) {
    const box = document.createElement("div");
    box.className = "kernel-group";
    const title = document.createElement("h3");
    title.textContent = g;
    title.title = cat.articles[g] ?? "";
    box.append(title);
    for (const k of cat.kernels.filter((k) => k.group === g)) box.append(kernelRow(app, k));
    kernelsHost.append(box);
  }

  const enginesHost = $("engines-list");
  enginesHost.replaceChildren();
  const available = browserEngines(app.bundle);
  for (const e of order([...cat.engines, ...BROWSER_ENGINES])) {
    const lab = document.createElement("label");
    lab.className = "engine-chip";
    const cb = document.createElement("input");
    cb.type = "checkbox";
    cb.name = "engine";
    cb.value = e;
    cb.checked = sel.engines.includes(e);
    cb.disabled = !cat.engines.includes(e) && !available.includes(e);
    const sw = document.createElement("span");
    sw.className = "swatch";
    sw.style.background = info(e).color;
    lab.title = cb.disabled ? `${info(e).what} — not in this build` : info(e).what;
    lab.append(cb, sw, document.createTextNode(info(e).title));
    cb.onchange = () => {
      sel.engines = order([...enginesHost.querySelectorAll<HTMLInputElement>("input:checked")].map((i) => i.value));
      changed(app);
    };
    appendGrouped(enginesHost, e, lab);
  }

  for (const [id, lim, key] of [
    ["runs", cat.runs, "runs"],
    ["warmup", cat.warmup, "warmup"],
    ["min_sample_ms", cat.min_sample_ms, "min_sample_ms"],
    ["warmup_ms", cat.warmup_ms, "warmup_ms"],
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
    void (app.custom?.active() ? app.custom.buildAndRun() : runAll(app));
  };
  $<HTMLButtonElement>("cancel").onclick = () => cancel(app);
  validate(app);
}

function kernelRow(app: App, k: Kernel): HTMLElement {
  const { sel } = app;
  const row = document.createElement("div");
  row.className = "kernel";
  row.dataset.kernel = k.name;
  const lab = document.createElement("label");
  const cb = document.createElement("input");
  cb.type = "checkbox";
  cb.name = "kernel";
  cb.value = k.name;
  cb.checked = sel.kernels.includes(k.name);
  const name = document.createElement("code");
  name.textContent = k.name;
  lab.append(cb, name);
  lab.title = k.summary;
  const params = document.createElement("span");
  params.className = "params";
  for (const p of k.params) {
    const pl = document.createElement("label");
    pl.className = "param";
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
  const err = document.createElement("div");
  err.className = "field-error";
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

/** validate marks the form's problems; it returns whether everything is in range. */
function validate(app: App): boolean {
  const { cat, sel } = app;
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
      ? `${cellCount(app)} cells, run one at a time.`
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
    timeoutMs: app.cat.timeout_ns / 1e6,
  };
  for (const row of rowsOf(app)) {
    if (row.invalid) continue;
    const k = row.kernel;
    for (const engine of enginesOf(app)) {
      const f = forecast(k.name, engine, row.args, calls);
      if (!f) continue;
      const li = document.createElement("li");
      li.dataset.kernel = k.name;
      li.dataset.engine = engine;
      li.textContent = `${row.label} on ${info(engine).title} is expected to fail: ${f.why}.`;
      if (f.fits) {
        const fits = f.fits;
        const b = document.createElement("button");
        b.type = "button";
        b.className = "ghost fits";
        b.textContent = `Use ${k.name}(${fits.join(", ")}), which ran`;
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

/** checkSetting validates runs, warmup, min_sample_ms or warmup_ms against the catalogue's bounds. */
function checkSetting(name: "runs" | "warmup" | "min_sample_ms" | "warmup_ms", text: string, lim: Limit): { value: number; error?: string } {
  const r = checkInt(text, name, lim.min, lim.max);
  if (r.error && name === "min_sample_ms") r.error += " ms (0: one call per sample)";
  if (r.error && name === "warmup_ms") r.error += " ms (0: the warm-up calls alone)";
  return r;
}

function changed(app: App): void {
  validate(app);
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

function tableHooks(app: App) {
  return { details: (r: number, e: string) => showDetails($<HTMLDialogElement>("details"), app.grid, r, e) };
}

/** enginesOf is the selected engines, in order (those that run user kernels, on that tab). */
function enginesOf(app: App): string[] {
  const engines = order(app.sel.engines);
  return app.custom?.active() ? app.custom.engines(engines) : engines;
}

/** preview shows the empty grid of the current selection. */
function preview(app: App): void {
  app.grid = new Grid(rowsOf(app), enginesOf(app), "idle");
  redraw(app);
}

function redraw(app: App): void {
  app.compare?.render();
  app.jit?.render();
  renderTable($("table"), app.grid, tableHooks(app), app.sel.history ? app.history : undefined);
  renderChart($("chart"), app.grid, app.sel.history ? app.history : undefined);
}

async function runAll(app: App): Promise<void> {
  if (app.running) return;
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
    checkSetting("warmup_ms", app.sel.warmup_ms, app.cat.warmup_ms).error;
  const grid = new Grid(rowsOf(app), enginesOf(app));
  grid.requestedRuns = runs;
  grid.warmupMs = warmupMs;
  app.grid = grid;
  app.running = true;
  document.body.dataset.running = "1";
  $<HTMLButtonElement>("run").disabled = true;
  $<HTMLButtonElement>("cancel").disabled = false;
  redraw(app);
  const hooks = tableHooks(app);
  const host = $("table");
  const started = performance.now();
  const total = [...grid.cells.values()].filter((s) => s.kind !== "na").length;
  let n = 0;
  outer: for (let r = 0; r < grid.rows.length; r++) {
    const row = grid.rows[r]!;
    for (const engine of grid.engines) {
      if (!app.running) break outer;
      if (grid.get(r, engine).kind === "na") continue; // a kernel this engine does not run
      n++;
      $("status").textContent = `Running ${n} of ${total}: ${row.label} on ${info(engine).title}…`;
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
      const job = { kernel: row.kernel, args: row.args, engine, runs, warmup, minSampleMs, warmupMs };
      const timeoutMs = app.cat.timeout_ns / 1e6;
      const run = app.custom?.active() ? app.custom.runCell(job, timeoutMs, update) : runCell(job, app.bundle, timeoutMs, update);
      app.current = run;
      const outcome = await run.done;
      app.current = undefined;
      if (app.grid !== grid) return;
      if (!app.custom?.active()) record(row.kernel.name, engine, row.args, outcome);
      grid.set(r, engine, outcome);
      updateRow(host, grid, r, hooks);
      renderChart($("chart"), grid, app.sel.history ? app.history : undefined);
    }
  }
  const cancelled = !app.running;
  app.stored?.ran(grid, { runs, warmup, minSampleMs });
  for (const [key, s] of grid.cells) {
    if (s.kind === "pending" || s.kind === "queued" || s.kind === "running") grid.cells.set(key, { kind: "cancelled" });
  }
  app.running = false;
  document.body.dataset.running = "0";
  redraw(app);
  $<HTMLButtonElement>("cancel").disabled = true;
  validate(app);
  $("status").textContent = cancelled
    ? "Cancelled."
    : `Done: ${total} cell${total === 1 ? "" : "s"} in ${duration((performance.now() - started) * 1e6)}.`;
}

function cancel(app: App): void {
  if (!app.running) return;
  app.running = false;
  app.current?.cancel();
  $("status").textContent = "Cancelling…";
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
    const md = toMarkdown(app.grid, firstServerEnv(app.grid), app.sel.history ? app.history : undefined);
    const note = $("copy-note");
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
      if (frame) frame.src = `/${name}/`;
    }
  }
  $("panels").hidden = !any;
  document.body.classList.toggle("with-panels", any);
}

type Theme = "auto" | "light" | "dark";

function initTheme(): void {
  const button = $<HTMLButtonElement>("theme");
  const apply = (t: Theme): void => {
    document.documentElement.dataset.theme = t;
    button.textContent = t === "auto" ? "◐ auto" : t === "light" ? "☀ light" : "☾ dark";
    button.setAttribute("aria-label", `colour theme: ${t}`);
  };
  let theme = (localStorage.getItem("wasmgap-theme") as Theme | null) ?? "auto";
  apply(theme);
  button.onclick = () => {
    theme = theme === "auto" ? "light" : theme === "light" ? "dark" : "auto";
    localStorage.setItem("wasmgap-theme", theme);
    apply(theme);
  };
}

void start();
