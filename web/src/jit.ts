// The JIT on / off view: for each runtime the server describes with an interpreter and a JIT
// (engine_info's runtime and tier: wazero's interpreter and compiler, HotSpot with -Xint and
// without, V8's Ignition and its JITs, LuaJIT with -joff and without, CPython and PyPy, PHP
// without and with opcache's JIT, V8's Liftoff and TurboFan for wasm, yaegi and native), each
// row's time on both tiers and the ratio, interpreter over JIT, from the table's own cells.

import { failureKind } from "./failure";
import { engines, info } from "./engines";
import { duration, ratio } from "./format";
import type { Grid } from "./results";
import { belowResolution } from "./results";
import { el } from "./dom";

/** A runtime's two tiers, as engine names. */
export interface Pair {
  runtime: string;
  interpreter: string;
  jit: string;
}

/** pairs lists the runtimes whose two tiers both are among names, in the JIT engines' order. */
export function pairs(names: string[]): Pair[] {
  const out: Pair[] = [];
  for (const j of engines()) {
    if (j.tier !== "jit" || !j.runtime || !names.includes(j.name)) continue;
    const i = engines().find((e) => e.tier === "interpreter" && e.runtime === j.runtime && names.includes(e.name));
    if (i) out.push({ runtime: j.runtime, interpreter: i.name, jit: j.name });
  }
  return out;
}

export class JITView {
  constructor(
    private readonly host: HTMLElement,
    private readonly grid: () => Grid,
  ) {}

  /** render redraws the view from the grid: hidden when no pair is selected. */
  render(): void {
    const g = this.grid();
    const ps = pairs(g.engines);
    this.host.hidden = ps.length === 0;
    if (ps.length === 0) {
      this.host.replaceChildren();
      return;
    }
    const table = el("table", "results jit-table");
    table.id = "jit-table";
    const head = el("tr");
    // The times and the ratio are right-aligned, as their columns' numbers are.
    ["kernel", "runtime", "interpreter", "time", "compiled tier", "time", "interpreter / compiled"].forEach((t, i) => head.append(el("th", i === 3 || i >= 5 ? "num" : undefined, t)));
    table.append(el("thead"), el("tbody"));
    table.tHead!.append(head);
    g.rows.forEach((row, r) => {
      for (const p of ps) {
        const tr = el("tr");
        tr.dataset.kernel = row.label;
        tr.dataset.runtime = p.runtime;
        const ti = this.cell(g, r, p.interpreter);
        const tj = this.cell(g, r, p.jit);
        const a = g.result(r, p.interpreter);
        const b = g.result(r, p.jit);
        const x = a && b && b.median_ns > 0 && !belowResolution(a) && !belowResolution(b) ? a.median_ns / b.median_ns : undefined;
        tr.append(
          el("td", undefined, row.label),
          el("td", undefined, p.runtime),
          el("td", undefined, info(p.interpreter).title),
          el("td", "num", ti),
          // Go's native build is compiled ahead of time: no JIT, and said so.
          el("td", undefined, p.runtime === "Go" ? `${info(p.jit).title} (ahead of time)` : `${info(p.jit).title} (JIT)`),
          el("td", "num", tj),
          el("td", "num ratio", x === undefined ? "—" : ratio(x)),
        );
        table.tBodies[0]!.append(tr);
      }
    });
    const wrap = el("div", "table-wrap");
    wrap.append(table);
    this.host.replaceChildren(
      el("h3", undefined, "Interpreter against compiled code"),
      el("p", "muted small", "Each runtime's interpreter against its compiled tier (a JIT; for Go, the native build, compiled ahead of time), from this run's cells: the ratio is what compiling buys."),
      wrap,
    );
  }

  private cell(g: Grid, r: number, engine: string): string {
    const s = g.get(r, engine);
    if (s.kind === "done") return s.result.failure ? failureKind(s.result.failure) : duration(s.result.median_ns);
    if (s.kind === "error") return "error";
    return s.kind === "running" ? "…" : "";
  }
}
