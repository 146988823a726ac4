// The articles' historical figures (GET /api/history), grouped as rows beside the live ones.

/** One historical figure: a runtime's time for a call, or what it failed with. */
export interface HistoricalFigure {
  runtime: string;
  seconds: number;
  failure?: string;
}

/** The historical figures of one call, from one article's machine. */
export interface HistoryRow {
  kernel: string;
  label: string;
  source: string;
  figures: HistoricalFigure[];
}

type Loose = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** normalize groups the API's figures by call and source. */
export function normalize(data: unknown): HistoryRow[] {
  const list: unknown[] = Array.isArray(data)
    ? data
    : Array.isArray((data as Loose | null)?.["figures"])
      ? ((data as Loose)["figures"] as unknown[])
      : [];
  const rows = new Map<string, HistoryRow>();
  for (const item of list) {
    if (typeof item !== "object" || item === null) continue;
    const f = item as Loose;
    const kernel = str(f["kernel"]);
    const runtime = str(f["runtime"]) ?? str(f["engine"]) ?? str(f["name"]);
    if (!kernel || !runtime) continue;
    const args = Array.isArray(f["args"]) ? (f["args"] as unknown[]).map(String) : [];
    const label = str(f["label"]) ?? `${kernel}(${args.join(", ")})`;
    const source = [str(f["machine"]), str(f["date"]) ?? str(f["year"]?.toString())].filter(Boolean).join(", ") || "the article";
    const seconds = num(f["seconds"]) ?? (num(f["ns"]) ?? num(f["time_ns"]) ?? NaN) / 1e9;
    const failure = str(f["failure"]) ?? str(f["note"] && !Number.isFinite(seconds) ? f["note"] : undefined);
    const key = `${label}|${source}`;
    let row = rows.get(key);
    if (!row) {
      row = { kernel, label, source, figures: [] };
      rows.set(key, row);
    }
    row.figures.push({ runtime, seconds, failure: failure ?? (Number.isFinite(seconds) ? undefined : "no figure") });
  }
  return [...rows.values()];
}
