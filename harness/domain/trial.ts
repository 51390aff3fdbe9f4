// The trial record: one line of trials.jsonl, and one SLURM task's result file. Failed trials are
// data and carry their evidence. The schema is the type: it is written once, here.
import { z } from 'zod';
import { roleOfText, roleSchema } from './roles.js';
import { configSchema } from './params.js';
import { telemetrySchema } from './telemetry.js';
import { memoryGrowthSchema, memorySeriesSchema } from './memory.js';

export const OUTCOMES = ['ok', 'oom', 'timeout', 'crash', 'invalid'] as const;
export type Outcome = (typeof OUTCOMES)[number];
export const outcomeSchema = z.enum(OUTCOMES);

export const stepSampleSchema = z.object({
  samples: z.number(),
  seconds: z.number(),
  data_wait_seconds: z.number().optional(),
  /**
   * Steps this sample stands for, when more than one: the steps past the first MAX_STEP_DETAIL of a
   * trial, folded into one sample of their summed samples, seconds and data waits (absent: one step).
   */
  count: z.number().int().min(2).optional(),
});
export type StepSample = z.infer<typeof stepSampleSchema>;

/**
 * Steps of a trial (timed, and warm-up apart) that its record keeps one by one; the rest are folded
 * into one last sample with a `count`. Totals (samples/s, data stall) stay exact, and a journal line
 * stays a few MB however many steps a workload reports.
 */
export const MAX_STEP_DETAIL = 10_000;

/** Steps that samples stand for: a folded sample counts as its `count`. */
export function stepCount(steps: readonly StepSample[]): number {
  let n = 0;
  for (const s of steps) n += s.count ?? 1;
  return n;
}

/** A phase of training other than the steps that the workload ran and reported (timer.phase(): eval, checkpoint). */
export const phaseRunSchema = z.object({
  phase: z.string(),
  /** The epoch at whose end it ran (0-based). */
  epoch: z.number().int().nonnegative().optional(),
  seconds: z.number().nonnegative(),
  /** `peak_scope` phase: the phase's own peak; process: the process's peak so far (the phase did not raise it). */
  peak_bytes: z.number().nonnegative().optional(),
  peak_scope: z.enum(['phase', 'process']).optional(),
});
export type PhaseRun = z.infer<typeof phaseRunSchema>;

/** Phase runs a record keeps (the first ones); a workload's further phase events are not kept. */
export const MAX_PHASE_RUNS = 256;

/**
 * Where a failed trial was when it failed. `source` event: the workload said so (the adapter's
 * failure report); open-phase: it was killed inside a phase that never ended; outside-phases: it
 * reported phases, none was open, so it was in its training steps.
 */
export const failedInSchema = z.object({
  /** setup (before the first batch), train, or a phase name such as eval or checkpoint. */
  phase: z.string(),
  epoch: z.number().int().nonnegative().optional(),
  /** Steps reported before the failure (warm-up included). */
  step: z.number().int().nonnegative().optional(),
  source: z.enum(['event', 'open-phase', 'outside-phases']),
});
export type FailedIn = z.infer<typeof failedInSchema>;

export const LIMIT_MECHANISMS = ['prlimit-as', 'cgroup-v2', 'cgroup-v1', 'none'] as const;
export type LimitMechanism = (typeof LIMIT_MECHANISMS)[number];

const seconds = z.number().min(0);
/**
 * Where a trial's wall time went (harness/trial/timeline.ts): `launch` (the harness until the process
 * ran), `setup` (a fresh process's imports and setup(); ~0 of a fork), `build` (until the first step:
 * model, device context, loader), `warmup`, `steps`, `finish` (after the last step until `done`),
 * `teardown` (until the exit), `after_exit` (the harness's cleanup), `harness` (launch + after_exit)
 * and `unaccounted` (the rest: waits between steps, phases, events without times). Null: not reported.
 */
export const trialTimelineSchema = z.object({
  launch: seconds,
  setup: seconds.nullable(),
  build: seconds.nullable(),
  warmup: seconds.nullable(),
  steps: seconds.nullable(),
  finish: seconds.nullable(),
  teardown: seconds,
  after_exit: seconds,
  harness: seconds,
  unaccounted: seconds,
});
export type TrialTimeline = z.infer<typeof trialTimelineSchema>;

/** The exception a failed trial died of: its last line and where it was raised (trial/exception.ts). */
export const trialExceptionSchema = z.object({ message: z.string(), where: z.string().optional() });
export type TrialException = z.infer<typeof trialExceptionSchema>;

/** One in-process attempt of a bracket session (max-batch `bracket: in-process`). */
export const bracketAttemptSchema = z.object({
  batch: z.number().int().positive(),
  outcome: z.enum(['ok', 'oom', 'crash', 'invalid']),
  /** CUDA's max_memory_allocated over the attempt, else the peak the attempt's steps reported. */
  peak_bytes: z.number().nullable(),
  seconds: z.number(),
  samples_per_second: z.number().nullable(),
  message: z.string().optional(),
});
export type BracketAttempt = z.infer<typeof bracketAttemptSchema>;

/**
 * Record format version: bump when a field changes meaning, and keep reading the old one. Format 2 adds
 * `ended_by`; format 3 keeps the role typed (domain/roles.ts), where formats 1 and 2 kept its words. Older
 * records are read through the schema's transform, which derives what they lack.
 */
export const RECORD_VERSION = 3 as const;
/** The record formats this tunebench reads. */
export const READABLE_RECORD_VERSIONS: readonly number[] = [1, 2, 3];

/**
 * How a trial ended, as one fact: by itself (an exit, or a signal tunebench did not send), or by tunebench
 * and why. The outcome says what the trial showed; this says who ended it.
 */
export const endedBySchema = z.discriminatedUnion('by', [
  z.object({ by: z.literal('exit'), code: z.number().int() }),
  z.object({ by: z.literal('signal'), signal: z.string() }),
  /** Ended by tunebench at its `done` event, and judged as the clean exit it was about to make. */
  z.object({ by: z.literal('done') }),
  /** Ended by its stop hook once its memory had flattened, judged as a clean exit. */
  z.object({ by: z.literal('plateau') }),
  /** Reported done, then did not exit within the grace: killed, its steps kept. */
  z.object({ by: z.literal('hanging-teardown') }),
  z.object({ by: z.literal('timeout') }),
  /** The run was stopped (a signal to tunebench) while the trial ran. */
  z.object({ by: z.literal('stop') }),
  /** One rank of several reported an OOM: every rank was stopped. */
  z.object({ by: z.literal('rank-oom'), rank: z.number().int() }),
  /** Broke out of its limits (trial/integrity.ts): ended at once. */
  z.object({ by: z.literal('broke-out'), why: z.string() }),
  /** Never ran as a process of its own: a SLURM task given up, or a bracket session's summary. */
  z.object({ by: z.literal('not-run') }),
  /** A format-1 record that does not tell. */
  z.object({ by: z.literal('unknown') }),
]);
export type EndedBy = z.infer<typeof endedBySchema>;

/** What a format-1 record's fields tell of how it ended. */
function endedByOfFormat1(r: { outcome: string; exit_code: number | null; signal: string | null }): EndedBy {
  if (r.outcome === 'timeout') return { by: 'timeout' };
  if (r.signal !== null) return { by: 'signal', signal: r.signal };
  if (r.exit_code !== null) return { by: 'exit', code: r.exit_code };
  return { by: 'unknown' };
}

/** Where a trial ran, when it ran in a SLURM job: the node, its device class and the job. */
export const trialNodeSchema = z.object({ host: z.string(), device: z.string(), slurm_job: z.string().nullable() });

const trialRecordFields = z.object({
  v: z.union([z.literal(1), z.literal(2), z.literal(RECORD_VERSION)]),
  /** Position in the journal, 0-based; stable across resume. */
  index: z.number().int().nonnegative(),
  stage: z.string(),
  /** What the trial was for inside its stage: typed (format 3), or its words (formats 1 and 2). */
  role: z.union([roleSchema, z.string()]),
  config: configSchema,
  /** The program and arguments, when the stage replaced the workload's command (a claim's two commands). */
  argv: z.array(z.string()).optional(),
  outcome: outcomeSchema,
  /** How the outcome was decided, e.g. "oom event from the workload" or "exit code 134 and pattern v8". */
  reason: z.string(),
  exit_code: z.number().nullable(),
  signal: z.string().nullable(),
  /**
   * Timed steps (warm-up excluded): the first MAX_STEP_DETAIL one by one, the rest folded into one
   * last sample with a `count` (stepCount gives the number of steps).
   */
  steps: z.array(stepSampleSchema),
  warmup_steps: z.number(),
  /** "process": the program sent no step events, so its whole run was timed as one step (absent: steps). */
  timing: z.literal('process').optional(),
  /** 'fork': forked from the workload's warm server (warm_start: fork); absent: a fresh process. */
  launch: z.literal('fork').optional(),
  /** The warm-up steps as reported, folded as `steps` are (records before this field have only the count). */
  warmup: z.array(stepSampleSchema).optional(),
  /**
   * Distinct epochs the workload's steps reported (TUNEBENCH_TRIAL_EPOCHS asks for them); absent
   * when it reports none.
   */
  epochs: z.number().optional(),
  /** Total samples over total step time (data waits included); null when no step was timed. */
  samples_per_second: z.number().nullable(),
  step_seconds: z.object({ median: z.number(), p95: z.number() }).nullable(),
  /** Peak resident set size of the trial's process tree (or as the workload reported it). */
  peak_rss_bytes: z.number().nullable(),
  /** Peak accelerator memory as the workload reported it (CUDA's max_memory_allocated); null on CPU. */
  peak_device_bytes: z.number().nullable().optional(),
  /** Peak of the quantity that the cap limits: address space under prlimit, cgroup memory under cgroup v1 or v2
   * (of a warm fork: with the server's share). */
  peak_limited_bytes: z.number().nullable(),
  limit: z.object({
    mechanism: z.enum(LIMIT_MECHANISMS),
    bytes: z.number().nullable(),
    /** How the trial was contained: 'cgroup' (its own cgroups, killed as a whole) or 'process-tree' (group, descendants, mark). */
    contained: z.enum(['cgroup', 'process-tree']).optional(),
    /**
     * Under prlimit (a cap per process): the peak RSS of the whole process tree, when it exceeded the cap
     * (DataLoader workers each get the whole cap). Absent when it did not, or under a cap of the tree.
     */
    tree_over_cap_bytes: z.number().optional(),
  }),
  /** CPU, RSS and GPU sampled while the trial ran: summaries and raw series. */
  telemetry: telemetrySchema,
  /** Memory per step (the workload's memory_bytes, else what the harness read at each step); absent: none. */
  memory_series: memorySeriesSchema.optional(),
  /** Of a trial run until memory flattens (a max-batch confirmation): whether it did (absent: no such rule). */
  memory_growth: memoryGrowthSchema.optional(),
  /** The workload's last `memory` event as it sent it, e.g. CUDA's max_memory_reserved and
   * num_alloc_retries, or the adapter's empty_cache_calls. */
  workload_report: z.record(z.string(), z.unknown()).optional(),
  /**
   * Ranks the trial ran as (workload.launcher: torchrun); absent: one process. Its steps are rank 0's
   * with every rank's samples, and its memory figures the largest rank's.
   */
  ranks: z.number().int().positive().optional(),
  /** Of a multi-rank trial: the rank whose reported peak_bytes was the largest. */
  peak_rank: z.number().int().nonnegative().optional(),
  /** Of a multi-rank trial: each rank's reported peak_bytes, by rank (null: that rank reported none). */
  rank_peak_bytes: z.array(z.number().nullable()).optional(),
  /** From before the launch to after the cleanup: what the trial cost, harness work included. */
  wall_seconds: z.number(),
  /** Where the wall time went, phase by phase (absent: an older record). */
  timeline: trialTimelineSchema.optional(),
  /** Of a bracket session (role "bracket"): its in-process attempts, in order. */
  attempts: z.array(bracketAttemptSchema).optional(),
  /**
   * Of a fresh process: seconds from its exec to its exit, nothing of the harness's work around it
   * (what `tunebench time` and a process_time claim measure); absent: a fork, or an older record.
   */
  process_seconds: z.number().optional(),
  /** Of a fresh process: the CPU seconds the kernel charged it and the children it waited for (10 ms ticks). */
  user_seconds: z.number().optional(),
  system_seconds: z.number().optional(),
  started_at: z.string(),
  /** Where the trial ran, when it ran in a SLURM job: the node, its device class and the job. */
  node: trialNodeSchema.optional(),
  /** The phases other than steps that the workload ran (eval, checkpoint), in order; at most MAX_PHASE_RUNS. */
  phases: z.array(phaseRunSchema).optional(),
  /** Of a failed trial: the phase it failed in, when the workload's events tell. */
  failed_in: failedInSchema.optional(),
  malformed_events: z.number(),
  /** Of a failed trial: the end of its stderr, where the adapter writes the full traceback. */
  stderr_tail: z.string(),
  /** Of a failed trial: the exception it died of, from stderr_tail, when it holds one. */
  error: trialExceptionSchema.optional(),
  patterns_version: z.number(),
  /** What the trial's numbers do not show by themselves, e.g. a tree that used more memory than a per-process cap. */
  notes: z.array(z.string()).optional(),
  /** How the trial ended (format 2; derived for a format-1 record). */
  ended_by: endedBySchema.optional(),
});

/**
 * A journal line: a record of format 3, or of format 1 or 2 read as format 3 (its role's words read as the
 * typed role, a format-1 record's `ended_by` derived from its exit and outcome). A record of format 2 or 3
 * without `ended_by` is refused: tunebench writes it with every record.
 */
export const trialRecordSchema = trialRecordFields
  .superRefine((r, ctx) => {
    if (r.v !== 1 && r.ended_by === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['ended_by'],
        message: `a record of format ${r.v} says how the trial ended`,
      });
    if (r.v === RECORD_VERSION && typeof r.role === 'string')
      ctx.addIssue({
        code: 'custom',
        path: ['role'],
        message: `a record of format ${r.v} has a typed role, not words`,
      });
    else if (typeof r.role === 'string' && roleOfText(r.role) === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['role'],
        message: `${JSON.stringify(r.role)} is no role tunebench writes`,
      });
  })
  .transform((r) => ({
    ...r,
    v: RECORD_VERSION,
    role: typeof r.role === 'string' ? roleOfText(r.role)! : r.role,
    ended_by: r.ended_by ?? endedByOfFormat1(r),
  }));
/** A trial record as tunebench holds it: format 3, with its typed role and how the trial ended. */
export type TrialRecord = z.output<typeof trialRecordSchema>;

/**
 * Why a failed trial failed, for a sentence: its reason and, where its stderr held one, the exception it
 * died of and where it was raised (a crash in the model's forward). An OOM or a timeout says it all itself.
 */
export function failureCause(r: Pick<TrialRecord, 'outcome' | 'reason' | 'error'>): string {
  const e = r.outcome === 'oom' || r.outcome === 'timeout' ? undefined : r.error;
  return e ? `${r.reason}: ${exceptionText(e)}` : r.reason;
}

/** An exception in a sentence: its line, and where it was raised when the traceback tells. */
export function exceptionText(e: TrialException): string {
  return `${e.message}${e.where ? `, raised in ${e.where}` : ''}`;
}

/** A run's seconds as a whole process: its process's window (exec to exit) where recorded, else the trial's wall time. */
export const runSeconds = (r: Pick<TrialRecord, 'process_seconds' | 'wall_seconds'>): number =>
  r.process_seconds ?? r.wall_seconds;

/** Telemetry samples a trial must span before its sampled peak memory counts as a measurement. */
export const MIN_SAMPLED_INTERVALS = 3;

/**
 * A trial's peak memory as compare and claim statistics use it: the device's when reported, else the
 * RSS of the process tree. Null when it was not measured: a program that reports no memory and ended
 * within MIN_SAMPLED_INTERVALS telemetry intervals (a 60 ms command is sampled once, as it starts)
 * was never seen at its peak, so its "peak" would be noise with a confident-looking CI.
 */
export function measuredPeakMemory(r: TrialRecord): number | null {
  const sampledOnly = r.workload_report === undefined;
  if (sampledOnly && r.wall_seconds * 1000 < MIN_SAMPLED_INTERVALS * r.telemetry.interval_ms) return null;
  return r.peak_device_bytes ?? r.peak_rss_bytes;
}
