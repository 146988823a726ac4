// The bench farm's control: on a server started with --farm, the Run's plan (its kernels,
// their arguments, its server engines and settings) sent to the farm's agents through
// POST /api/farm, each machine's progress as its cells come, and the stored runs at the
// end (the Results tab sets them side by side). docs/FARM.md describes a farm.

import { APIFailure, postNDJSON } from "./api";
import { duration } from "./format";
import type { Catalogue } from "./types";
import { button, el } from "./dom";

/** The body of POST /api/farm: a Run's plan, without its mode. */
export interface FarmPlan {
  kernels: string[];
  engines: string[];
  /** The kernels' arguments, as kernel.param. */
  args: Record<string, number>;
  runs: number;
  warmup: number;
  min_sample_ms: number;
  warmup_ms: number;
  timeout_ms: number;
}

/** One table of a farm run: an agent's (each) or a kind's (split). */
interface FarmTable {
  name: string;
  machine: string;
  done: number;
  cells: number;
  run?: number;
  partial?: string;
}

/** One NDJSON line of POST /api/farm. */
interface FarmEvent {
  type: "queued" | "started" | "published" | "log" | "result" | "done" | "error";
  position?: number;
  farm_run?: string;
  tables?: FarmTable[];
  table?: FarmTable;
  agent?: string;
  done?: number;
  total?: number;
  left_ns?: number;
  text?: string;
  error?: string;
}

/**
 * mountFarm adds the farm's control after the element `after` (in the Run button's row)
 * when the server has a farm (cat.panels.farm); plan returns the Run's plan as the form
 * stands.
 */
export function mountFarm(cat: Catalogue, after: HTMLElement, plan: () => FarmPlan): void {
  if (cat.panels["farm"] !== true) return;
  const box = el("div", "farm");
  box.id = "farm";
  const mode = document.createElement("select");
  mode.id = "farm-mode";
  for (const [value, text] of [
    ["each", "each machine runs the plan"],
    ["split", "machines of a kind share it"],
  ] as const) {
    const o = el("option", undefined, text);
    o.value = value;
    mode.append(o);
  }
  const label = document.createElement("label");
  label.append("Bench farm: ", mode);
  const run = button("farm-run", "Run on the farm");
  const stop = button("farm-stop", "Stop");
  stop.disabled = true;
  const status = el("p", "muted small");
  status.id = "farm-status";
  status.setAttribute("role", "status");
  const log = el("p", "muted small");
  log.id = "farm-log";
  const list = document.createElement("ul");
  list.id = "farm-tables";
  box.append(label, " ", run, " ", stop, status, list, log);
  after.after(box);

  let controller: AbortController | undefined;
  const show = (tables: FarmTable[]): void => {
    for (const t of tables) {
      let li = [...list.children].find((c) => (c as HTMLElement).dataset.table === t.name) as HTMLLIElement | undefined;
      if (!li) {
        li = document.createElement("li");
        li.dataset.table = t.name;
        list.append(li);
      }
      li.replaceChildren(`${t.name} (${t.machine}): ${t.done} of ${t.cells} cells`);
      if (t.partial) li.append(`, ${t.partial}`);
      if (t.run) {
        const a = el("a", undefined, `run ${t.run}`);
        a.href = `/runs/${t.run}`;
        li.append(", stored as ", a);
      }
    }
  };
  stop.onclick = () => controller?.abort();
  run.onclick = async () => {
    controller = new AbortController();
    run.disabled = true;
    stop.disabled = false;
    list.replaceChildren();
    log.textContent = "";
    status.textContent = "Sending the plan…";
    let stored = 0;
    try {
      await postNDJSON<FarmEvent>("/api/farm", { ...plan(), mode: mode.value }, controller.signal, (e) => {
        switch (e.type) {
          case "queued":
            status.textContent = `Waiting in the server's queue: place ${e.position ?? "?"}.`;
            break;
          case "started":
            status.textContent = "Waiting for the farm's agents…";
            break;
          case "published":
            status.textContent = `Farm run ${e.farm_run ?? ""}: ${e.total ?? 0} cells published.`;
            show(e.tables ?? []);
            break;
          case "log":
            log.textContent = e.text ?? "";
            break;
          case "result":
            if (e.table) show([e.table]);
            status.textContent = `${e.done ?? 0} of ${e.total ?? 0} cells in${e.left_ns ? `, about ${duration(e.left_ns)} left` : ""}.`;
            break;
          case "done":
            show(e.tables ?? []);
            stored = (e.tables ?? []).filter((t) => t.run).length;
            status.textContent =
              stored > 1
                ? `Done: ${stored} stored runs, one per table; check them in the Results tab to set the machines side by side.`
                : "Done.";
            break;
          case "error":
            status.textContent = `The farm stopped: ${e.error ?? "unknown error"}`;
            break;
        }
      });
    } catch (err) {
      if (controller.signal.aborted) status.textContent = "Stopped: the jobs no agent took are withdrawn, the cells done kept.";
      else status.textContent = err instanceof APIFailure || err instanceof Error ? err.message : String(err);
    } finally {
      run.disabled = false;
      stop.disabled = true;
      controller = undefined;
    }
  };
}
