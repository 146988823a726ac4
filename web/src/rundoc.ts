// A run as a document: every cell the page measured, keyed by kernel, arguments and
// engine, kept while the selection changes (a cell unticked is hidden, never lost) and
// across a reload for an hour (localStorage), with the stored run it became.

import type { CellState } from "./cells";
import type { Row } from "./results";

/** How long a document is taken back after a reload. */
export const KEEP_MS = 60 * 60 * 1000;

const STORAGE_KEY = "wasmgap-run";

/** The outcome kinds a document keeps: a measurement or a failure, never a cell on its way. */
type Outcome = Extract<CellState, { kind: "done" | "error" }>;

function isOutcome(s: CellState): s is Outcome {
  return s.kind === "done" || s.kind === "error";
}

/** What localStorage holds. */
interface Saved {
  at: number;
  query: string;
  requestedRuns: number;
  warmupMs: number;
  stored?: number;
  cells: [string, Outcome][];
}

export class RunDoc {
  readonly cells = new Map<string, Outcome>();
  /** When the last Run ended (ms since the epoch), 0 before any. */
  at = 0;
  /** The selection of the last Run, as its query string (toQuery). */
  query = "";
  /** The timed runs and the warm-up's minimum the last Run asked for. */
  requestedRuns = 0;
  warmupMs = 0;
  /** The stored run the last Run's server cells became, when the server keeps them. */
  stored?: number;

  /** key names a cell: its kernel (a user's kernel by its build), arguments and engine. */
  static key(row: Row, engine: string): string {
    return `${row.kernel.name}(${row.args.join(",")}) on ${engine}`;
  }

  get(row: Row, engine: string): Outcome | undefined {
    return this.cells.get(RunDoc.key(row, engine));
  }

  /** set keeps a cell's outcome; a cell on its way or cancelled leaves the last outcome. */
  set(row: Row, engine: string, s: CellState): void {
    if (isOutcome(s)) this.cells.set(RunDoc.key(row, engine), s);
  }

  /** covers reports whether the document holds an outcome for every cell given. */
  covers(cells: { row: Row; engine: string }[]): boolean {
    return cells.length > 0 && cells.every((c) => this.get(c.row, c.engine) !== undefined);
  }

  /** save writes the document to localStorage (a full or refused storage loses only the reload). */
  save(): void {
    const saved: Saved = { at: this.at, query: this.query, requestedRuns: this.requestedRuns, warmupMs: this.warmupMs, stored: this.stored, cells: [...this.cells] };
    try {
      localStorage.setItem(STORAGE_KEY, JSON.stringify(saved));
    } catch {
      // private mode or full: the document lives in this page only
    }
  }

  /** load reads the document a page of this origin saved within KEEP_MS, else an empty one. */
  static load(now: number): RunDoc {
    const doc = new RunDoc();
    let saved: Saved | undefined;
    try {
      saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "null") as Saved | undefined;
    } catch {
      saved = undefined;
    }
    if (!saved || typeof saved.at !== "number" || now - saved.at > KEEP_MS || !Array.isArray(saved.cells)) return doc;
    doc.at = saved.at;
    doc.query = String(saved.query ?? "");
    doc.requestedRuns = Number(saved.requestedRuns) || 0;
    doc.warmupMs = Number(saved.warmupMs) || 0;
    doc.stored = typeof saved.stored === "number" ? saved.stored : undefined;
    for (const [k, s] of saved.cells) if (typeof k === "string" && s && isOutcome(s)) doc.cells.set(k, s);
    return doc;
  }
}

/** newBatch draws the random name of one Run, which the server stores as one run. */
export function newBatch(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}
