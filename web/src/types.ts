// The shapes of the playground API (package playground) and of one measured cell, shared
// by the page and its workers.

import type { EngineInfo } from "./engines";
import type { Execution, Interval } from "./stats";

export type { Execution };

/** One integer parameter of a kernel, with its default and allowed range. */
export interface Param {
  name: string;
  doc: string;
  default: number;
  min: number;
  max: number;
}

/** A kernel of the catalogue (GET /api/kernels). */
export interface Kernel {
  name: string;
  export: string;
  func: string;
  group: string;
  article: string;
  summary: string;
  params: Param[];
  /** host_call: it times one call from the host into kernels.wasm, so only the engines of
   * kernels.wasm run it (EngineInfo.kernels_wasm), one call across per iteration. */
  host_call?: boolean;
}

/** A bounded number of the API. */
export interface Limit {
  default: number;
  min: number;
  max: number;
}

/** The server's machine and versions. */
export interface ServerEnvironment {
  cpu: string;
  cores: number;
  gomaxprocs: number;
  os: string;
  arch: string;
  go: string;
  modules?: Record<string, string>;
  /** The runtimes outside the Go binary behind the cells (report.Runtime): "gcc 12.2.0", "PHP 8.2.29 (opcache on, JIT tracing)". */
  runtimes?: Runtime[];
}

/** The runtime behind one engine, as the engine reports it. */
export interface Runtime {
  engine: string;
  version: string;
}

/** The browser's side of an environment. */
export interface BrowserEnvironment {
  user_agent: string;
  cores: number;
  cross_origin_isolated: boolean;
  /** The smallest step of performance.now() observed, in nanoseconds. */
  timer_resolution_ns: number;
}

/** GET /api/kernels. */
export interface Catalogue {
  kernels: Kernel[];
  engines: string[];
  /** The engines whose explanation waits for a JIT's warm-up (explain.JITs). */
  explain_jits?: string[];
  /** What the server says about its engines and the page's (package engine's registry). */
  engine_info?: EngineInfo[];
  /** The server engines that run user kernels (package custom's Engines), when it builds them. */
  custom_engines?: string[];
  /** True while the server fills its build cache for user kernels in the background. */
  custom_warming?: boolean;
  runs: Limit;
  warmup: Limit;
  /** The worker processes of one server cell (its runs spread over them). */
  executions?: Limit;
  /** How long a sample lasts at least, in ms (0: one call per sample). */
  min_sample_ms: Limit;
  /** How long a warm-up lasts at least, in ms (0: its warmup calls alone). */
  warmup_ms: Limit;
  /** A warm-up study's executions, samples per execution and budget in ms (its default: the
   * server's, which it shares out when a study would last too long). */
  study_executions: Limit;
  calls: Limit;
  budget_ms: Limit;
  timeout_ns: number;
  slots: number;
  environment: ServerEnvironment;
  panels: Record<string, boolean>;
  articles: Record<string, string>;
}

/** One-off cost of an engine. */
export interface Setup {
  compile_ns: number;
  instantiate_ns: number;
  cached?: boolean;
}

/** One measured cell: a kernel with its arguments on one engine (measure.Result's shape). */
export interface CellResult {
  kernel: string;
  args: number[];
  engine: string;
  where: "server" | "browser";
  runs: number;
  warmup: number;
  /** How long the whole warm-up lasted, in ns: the warmup calls and the calls that made it
   * last the minimum warm-up time (absent: no warm-up). */
  warmed_up_ns?: number;
  /** k: the calls each sample repeats (1 when a call lasts the sample's minimum). */
  calls: number;
  /** How long a sample lasted at least, in ns (0 or absent: one call per sample). */
  min_sample_ns?: number;
  /** The value computed and the catalogue's, as exact decimal strings. */
  value: string;
  expected: string;
  /** The samples, each its time divided by calls: ns per call. */
  samples_ns: number[];
  min_ns: number;
  median_ns: number;
  max_ns: number;
  /** The median's 95% confidence interval (absent under 6 samples). With executions, the
   * median is their geometric mean and ci its interval over them (stats.acrossExecutions). */
  ci?: Interval;
  /** The worker processes that measured the cell, in the order they ran (absent: one
   * process, as a browser cell or an older stored run; stats.executionsOf). */
  executions?: Execution[];
  /** The very first call, alone, before any warm-up (V8's baseline tier; the engine's cold start). */
  first_ns?: number;
  /** Server engines: what else the machine did during the samples. */
  noise?: Noise;
  setup: Setup;
  failure?: string;
  server?: ServerEnvironment;
  browser?: BrowserEnvironment;
  /** Free-form notes on how the engine ran the call (e.g. "BigInt arithmetic"). */
  note?: string;
  /** The stored run that holds this server cell, when the server keeps a results store. */
  run?: number;
}

/** What the rest of the server's machine did while a cell's samples ran (measure.Noise). */
export interface Noise {
  load1: number;
  /** Other processes' CPU time during the samples, in cores busy on average. */
  other_cpu: number;
  cores: number;
  busy?: boolean;
  /** The hypervisor's steal time during the samples, in cores on average. */
  steal?: number;
  /** The worker's minor page faults per call, from calibration to the last sample. */
  faults_per_call?: number;
}

/** The server's result as POST /api/run streams it. */
export interface ServerResult {
  kernel: string;
  args: number[];
  engine: string;
  runs: number;
  warmup: number;
  calls?: number;
  value: number;
  expected: number;
  samples_ns?: number[];
  min_ns: number;
  median_ns: number;
  max_ns: number;
  ci?: Interval;
  executions?: Execution[];
  first_ns?: number;
  noise?: Noise;
  setup: Setup;
  failure?: string;
}

/** One NDJSON line of POST /api/run. */
export interface RunEvent {
  type: "queued" | "started" | "progress" | "result" | "error";
  position?: number;
  phase?: string;
  done?: number;
  total?: number;
  result?: ServerResult;
  value?: string;
  expected?: string;
  environment?: ServerEnvironment;
  /** The stored run that holds the cell, for "result" when the server keeps a store. */
  run?: number;
  error?: string;
}

/** A 4xx/5xx answer of the API. */
export interface APIError {
  error: string;
  field?: string;
}

/** Progress of a cell while it runs. */
export interface Progress {
  phase: string;
  done: number;
  total: number;
}

/** The engines that run in the page. */
export const BROWSER_ENGINES = ["browser-wasm", "browser-js"] as const;
