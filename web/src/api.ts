// The playground's HTTP API, as the page calls it.

import { setEngines } from "./engines";
import type { APIError, Catalogue, RunEvent } from "./types";

/** An error answer of the API: its message and the request field at fault. */
export class APIFailure extends Error {
  constructor(
    message: string,
    readonly field: string | undefined,
    readonly status: number,
  ) {
    super(message);
  }
}

/** failure reads an error answer of the API (its JSON error and field, else the status). */
export async function failure(resp: Response): Promise<APIFailure> {
  let body: APIError | undefined;
  try {
    body = (await resp.json()) as APIError;
  } catch {
    // not JSON: fall through to the status text
  }
  return new APIFailure(body?.error ?? `${resp.status} ${resp.statusText}`, body?.field, resp.status);
}

export async function fetchCatalogue(): Promise<Catalogue> {
  const resp = await fetch("/api/kernels");
  if (!resp.ok) throw await failure(resp);
  const cat = (await resp.json()) as Catalogue;
  setEngines(cat.engine_info);
  return cat;
}

/** The catalogue's expected value for a call, as a decimal string (exact past 2^53). */
export async function fetchExpected(kernel: string, args: Record<string, number>, signal: AbortSignal): Promise<string> {
  const q = new URLSearchParams({ kernel });
  for (const [k, v] of Object.entries(args)) q.set(k, String(v));
  const resp = await fetch(`/api/expected?${q}`, { signal });
  if (!resp.ok) throw await failure(resp);
  return ((await resp.json()) as { expected: string }).expected;
}

export async function fetchHistory(): Promise<unknown> {
  const resp = await fetch("/api/history");
  if (!resp.ok) throw await failure(resp);
  return resp.json();
}

/** The body of POST /api/run. */
export interface RunRequest {
  kernel: string;
  engine: string;
  args: Record<string, number>;
  runs: number;
  warmup: number;
  /** How long a sample lasts at least, in ms (0: one call per sample). */
  min_sample_ms: number;
  /** How long a warm-up lasts at least, in ms (0: its warmup calls alone). */
  warmup_ms: number;
  /** The page's Run this cell belongs to: the server stores one Run's cells as one run. */
  batch?: string;
  /** This cell's time limit, in ms, below the server's. */
  timeout_ms?: number;
}

/** runOnServer posts a run and calls onEvent for each NDJSON line until the stream ends. */
export async function runOnServer(req: RunRequest, signal: AbortSignal, onEvent: (e: RunEvent) => void): Promise<void> {
  return postNDJSON("/api/run", req, signal, onEvent);
}

/** postNDJSON posts body as JSON and calls onEvent for each line of the NDJSON answer. */
export async function postNDJSON<T>(url: string, body: unknown, signal: AbortSignal, onEvent: (e: T) => void): Promise<void> {
  const resp = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  if (!resp.ok) throw await failure(resp);
  if (!resp.body) throw new Error("the server's answer has no body");
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += value;
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (line) onEvent(JSON.parse(line) as T);
    }
  }
  if (buffered.trim()) onEvent(JSON.parse(buffered) as T);
}
