// The articles' historical figures (GET /api/history, package history's Figure), grouped
// as rows beside the live ones: one row per call and article table.

/** One figure as the API sends it (package history's Figure). */
export interface Figure {
  table: string;
  article: string;
  label: string;
  language: string;
  version: string;
  hardware: string;
  kernel: string;
  args: number[];
  text: string;
  seconds: number;
  failure?: string;
  note?: string;
}

/** One historical figure in a row: a runtime's time for a call, or what it failed with. */
export interface HistoricalFigure {
  runtime: string;
  seconds: number;
  failure?: string;
  /** As the article printed it ("0.0000s", "45.0391s"). */
  printed: string;
  /** The printed figure with any note on how the article's code differs from the kernel. */
  detail: string;
}

/** The historical figures of one call, from one article table. */
export interface HistoryRow {
  kernel: string;
  label: string;
  source: string;
  figures: HistoricalFigure[];
}

/** shown is a figure as the page prints it: a duration, or the article's own text for a
 * zero ("0.0000s": under the article's clock) and for a failure. */
export function shown(f: HistoricalFigure, fmt: (ns: number) => string): string {
  if (f.failure) return f.failure;
  if (!(f.seconds > 0)) return f.printed || "—";
  return fmt(f.seconds * 1e9);
}

/** normalize groups the API's figures by call and table. */
export function normalize(data: unknown): HistoryRow[] {
  const list = Array.isArray(data) ? (data as Partial<Figure>[]) : [];
  const rows = new Map<string, HistoryRow>();
  for (const f of list) {
    if (!f || typeof f.kernel !== "string" || typeof f.label !== "string") continue;
    const args = Array.isArray(f.args) ? f.args : [];
    const label = `${f.kernel}(${args.join(", ")})`;
    const source = `${f.table ?? "the article"}, ${f.hardware ?? "unknown hardware"}`;
    const key = `${label}|${source}`;
    let row = rows.get(key);
    if (!row) {
      row = { kernel: f.kernel, label, source, figures: [] };
      rows.set(key, row);
    }
    row.figures.push({
      runtime: f.label,
      seconds: typeof f.seconds === "number" ? f.seconds : NaN,
      failure: f.failure || undefined,
      printed: f.text ?? "",
      detail: [`printed: ${f.text ?? ""}`, f.note].filter(Boolean).join(" — "),
    });
  }
  return [...rows.values()];
}
