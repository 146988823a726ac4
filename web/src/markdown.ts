// The results as a Markdown table, to paste into an issue or a README.

import { info } from "./engines";
import { duration, ratio } from "./format";
import { type HistoryRow, shown } from "./history";
import { type Grid, medianText } from "./results";
import { spread, wide } from "./stats";
import type { ServerEnvironment } from "./types";

const cellText = (s: string): string => s.replaceAll("|", "\\|").replaceAll("\n", " ");

export function toMarkdown(grid: Grid, server: ServerEnvironment | undefined, history: HistoryRow[] | undefined): string {
  const lines: string[] = [];
  lines.push(`| kernel | ${grid.engines.map((e) => info(e).title).join(" | ")} |`);
  lines.push(`| --- | ${grid.engines.map(() => "---:").join(" | ")} |`);
  grid.rows.forEach((row, r) => {
    const cells = grid.engines.map((e) => {
      const s = grid.get(r, e);
      switch (s.kind) {
        case "done": {
          if (s.result.failure) return cellText(s.result.failure);
          const x = grid.ratio(r, e);
          const res = s.result;
          const k = (res.calls ?? 1) > 1 ? ` k=${res.calls}` : "";
          const w = wide(res.median_ns, res.ci) ? " wide" : "";
          return `${medianText(res, duration)} ${spread(res.median_ns, res.ci)}${w} (${duration(res.min_ns)}–${duration(res.max_ns)})${x !== undefined ? ` ${ratio(x)}` : ""}${k}`;
        }
        case "error":
          return cellText(`error: ${s.message}`);
        case "na":
          return "n/a";
        default:
          return s.kind;
      }
    });
    lines.push(`| \`${row.label}\` | ${cells.join(" | ")} |`);
  });
  const runs = [...grid.cells.values()].find((s) => s.kind === "done");
  lines.push("");
  if (runs?.kind === "done") {
    lines.push(
      `Median of ${grid.requestedRuns || runs.result.runs} timed samples per cell (fewer where a cell's time limit allowed fewer) after ${runs.result.warmup} warm-up(s)` +
        (runs.result.warmup > 0 && runs.result.warmed_up_ns ? ` and more, a warm-up of at least ${duration(grid.warmupMs * 1e6)}, ` : ", ") +
        (runs.result.min_sample_ns === 0
          ? "one call per sample, "
          : `a sample repeating the call k times until it lasts ${duration(runs.result.min_sample_ns ?? 10e6)}, time per call; `) +
        "± is the half-width of the median's 95% confidence interval (order statistics), " +
        "wide past ±5%, ±? under 6 samples (no interval); min–max in brackets; " +
        `× is the median over the row's ${grid.baseline(0) ?? "native"} median, from this one run.`,
    );
  }
  if (server) {
    const mods = Object.entries(server.modules ?? {}).map(([k, v]) => `${k} ${v}`).join(", ");
    lines.push(`Server: ${server.cpu}, ${server.cores} cores, GOMAXPROCS ${server.gomaxprocs}, ${server.go} ${server.os}/${server.arch}${mods ? `, ${mods}` : ""}.`);
  }
  const runtimes = new Map<string, string>();
  for (const s of grid.cells.values()) {
    if (s.kind !== "done") continue;
    for (const r of s.result.server?.runtimes ?? []) if (!runtimes.has(r.engine)) runtimes.set(r.engine, r.version);
  }
  if (runtimes.size > 0) lines.push(`Runtimes: ${[...runtimes].map(([e, v]) => `${info(e).title} ${cellText(v)}`).join(", ")}.`);
  lines.push(`Browser: ${navigator.userAgent}.`);
  if (history?.length) {
    lines.push("", "The articles' figures:", "", "| call | source | figures |", "| --- | --- | --- |");
    for (const h of history.filter((h) => grid.rows.some((r) => r.kernel.name === h.kernel))) {
      const figs = h.figures.map((f) => `${f.runtime} ${shown(f, duration)}`).join(", ");
      lines.push(`| \`${h.label}\` | ${cellText(h.source)} | ${cellText(figs)} |`);
    }
  }
  return lines.join("\n") + "\n";
}
