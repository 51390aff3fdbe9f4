// The trial record: one line of trials.jsonl. Failed trials are data and carry their evidence.
import type { ParamValue } from '../experiment/schema.js';
import type { Telemetry } from '../telemetry/sampler.js';

export type Outcome = 'ok' | 'oom' | 'timeout' | 'crash' | 'invalid';
export const OUTCOMES: readonly Outcome[] = ['ok', 'oom', 'timeout', 'crash', 'invalid'];

export type Config = Record<string, ParamValue>;

export interface StepSample {
  samples: number;
  seconds: number;
  data_wait_seconds?: number;
}

export type LimitMechanism = 'prlimit-as' | 'cgroup-v2' | 'none';

export interface TrialRecord {
  /** Record format version. */
  v: 1;
  /** Position in the journal, 0-based; stable across resume. */
  index: number;
  stage: string;
  /** What the trial was for inside its stage, e.g. "probe", "confirm", "throughput". */
  role: string;
  config: Config;
  /** The program and arguments, when the stage replaced the workload's command (a claim's two commands). */
  argv?: string[];
  outcome: Outcome;
  /** How the outcome was decided, e.g. "oom event from the workload" or "exit code 134 and pattern v8". */
  reason: string;
  exit_code: number | null;
  signal: string | null;
  /** Timed steps (warm-up excluded). */
  steps: StepSample[];
  warmup_steps: number;
  /** The warm-up steps as reported (records before this field have only the count). */
  warmup?: StepSample[];
  /** Distinct epochs the workload's steps reported (TUNEBENCH_TRIAL_EPOCHS asks for them); absent when it reports none. */
  epochs?: number;
  /** Total samples over total step time (data waits included); null when no step was timed. */
  samples_per_second: number | null;
  step_seconds: { median: number; p95: number } | null;
  /** Peak resident set size of the trial's process tree (or as the workload reported it). */
  peak_rss_bytes: number | null;
  /** Peak accelerator memory as the workload reported it (CUDA's max_memory_allocated); null on CPU. */
  peak_device_bytes?: number | null;
  /** Peak of the quantity that the cap limits: address space under prlimit, cgroup memory under cgroup v2. */
  peak_limited_bytes: number | null;
  limit: { mechanism: LimitMechanism; bytes: number | null };
  /** CPU, RSS and GPU sampled while the trial ran: summaries and raw series. */
  telemetry: Telemetry;
  /** The workload's last `memory` event as it sent it, e.g. CUDA's max_memory_reserved and
   * num_alloc_retries, or the adapter's empty_cache_calls. */
  workload_report?: Record<string, unknown>;
  wall_seconds: number;
  started_at: string;
  /** Where the trial ran, when it ran in a SLURM job: the node, its device class and the job. */
  node?: { host: string; device: string; slurm_job: string | null };
  malformed_events: number;
  stderr_tail: string;
  patterns_version: number;
  /** What the trial's numbers do not show by themselves, e.g. a tree that used more memory than a per-process cap. */
  notes?: string[];
}
