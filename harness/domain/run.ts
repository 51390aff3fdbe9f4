// The parts of run.json that do not depend on the stage kinds: its format version, typed warnings, the
// statuses, how a run stopped, what a bisect run bisects. run.json itself, whose result holds each
// stage's outcome, is typed in experiment/run-file.ts beside the kinds.
import { z } from 'zod';

/**
 * run.json format version: 3 since stage notes are typed; format 2 kept notes as sentences, and format 1
 * its warnings too.
 */
export const RUN_VERSION = 3;
/** The formats this tunebench reads: formats 1 and 2 are read through transforms into format 3 (runJsonSchema). */
export const READABLE_RUN_VERSIONS: readonly number[] = [1, 2, 3];

/** Format versions as a message lists them: "1, 2 and 3". */
export const versionList = (v: readonly number[]): string =>
  v.length < 2 ? v.join('') : `${v.slice(0, -1).join(', ')} and ${String(v.at(-1))}`;

/**
 * A warning of the run, typed: what it is and its figures. The sentence is made where it is printed
 * (report/warnings.ts), so no code reads a warning's wording.
 */
export const runWarningSchema = z.discriminatedUnion('kind', [
  /** limits.memory unset or mechanism "none": nothing capped the trials. */
  z.object({ kind: z.literal('no-memory-cap') }),
  /** A max-batch stage found nothing under an address-space cap too small for the runtime itself. */
  z.object({ kind: z.literal('address-space-too-small'), stage: z.string(), cap_bytes: z.number() }),
  /** Trials whose process tree held more than the per-process (prlimit) cap. */
  z.object({
    kind: z.literal('tree-over-cap'),
    trials: z.number(),
    peak_bytes: z.number(),
    first_trial: z.number(),
    cap_bytes: z.number(),
  }),
  /** Every trial is done, but the reports could not be written. */
  z.object({ kind: z.literal('reports-not-written'), error: z.string(), run_dir: z.string() }),
  /** A sentence from elsewhere: a resume, the journal, SLURM, a rebuilt or partly drawn report, or a run of format 1. */
  z.object({
    kind: z.literal('note'),
    source: z.enum(['resume', 'journal', 'slurm', 'rebuild', 'report', 'format-1']),
    text: z.string(),
  }),
]);
export type RunWarning = z.infer<typeof runWarningSchema>;

/** A warning as run.json holds it: typed, or (format 1) a sentence, read as a note. */
export const storedWarningSchema = z.union([
  runWarningSchema,
  z.string().transform((text): RunWarning => ({ kind: 'note', source: 'format-1', text })),
]);

export const RUN_STATUSES = ['running', 'waiting', 'stopped', 'failed', 'finished'] as const;

export const stopInfoSchema = z.object({
  /** Why: "stopped by SIGTERM", or the error that ended the run. */
  reason: z.string(),
  /** The stage that was running, its trials so far, and all completed trials. */
  stage: z.string(),
  stage_trials: z.number(),
  completed_trials: z.number(),
  /** The command that continues the run. */
  resume: z.string(),
});
export type StopInfo = z.infer<typeof stopInfoSchema>;

/** What a `tunebench bisect` run bisects, so that --resume can go on (absent in other runs). */
export const bisectRunSchema = z.object({
  repo: z.string(),
  good: z.string(),
  bad: z.string(),
  build: z.string().nullable(),
  build_timeout_seconds: z.number(),
  /** The experiment file's path inside the repository (its workload runs from there); null: outside, or a one-liner. */
  experiment_in_repo: z.string().nullable(),
  min_rounds: z.number(),
  max_rounds: z.number(),
  check_min_rounds: z.number(),
  extended_max_rounds: z.number(),
  noise_band: z.number(),
  max_steps: z.number().nullable(),
});
export type BisectRun = z.infer<typeof bisectRunSchema>;

/** Whether a run finished: status "finished", or (runs from before `status` existed) a result without a stop. */
export function isFinished(run: { status?: string | undefined; result?: unknown }): boolean {
  return run.status === 'finished' || (run.status === undefined && run.result !== undefined);
}
