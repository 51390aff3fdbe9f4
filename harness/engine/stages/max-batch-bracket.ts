// The max-batch stage's in-process bracket (bracket: in-process): attempts in one process of the workload
// place the boundary, journaled as one trial (role "bracket") with every attempt; the fresh search then
// decides from it (harness/search/max-batch.ts, `hint`). What a run trusts of each: docs/max-batch.md.
import type { Frozen } from '../../util/frozen.js';
import type { MaxBatchStageSpec } from '../../experiment/schema.js';
import { emptyBracket, nextAttempt, withAttempt, type Bracket, type BracketOptions } from '../../search/bracket.js';
import type { MaxBatchOptions } from '../../search/max-batch.js';
import type { Reading } from '../../search/memory-fit.js';
import { openBracketSession } from '../../trial/bracket-session.js';
import type { StageInput } from '../context.js';
import { formatBytes } from '../../experiment/units.js';
import { ConfigError } from '../../errors.js';
import { roleText, type BracketAttempt, type TrialRecord } from '../../domain/index.js';

/** Attempts one bracket may make. */
export const MAX_BRACKET_ATTEMPTS = 32;

/** Which search a stage runs, and why, from its spec and where it runs. */
export function bracketMode(
  input: StageInput,
  spec: Frozen<MaxBatchStageSpec>,
): { mode: 'in-process' | 'fresh'; why: string } {
  const w = input.experiment.workload;
  const warm = w.kind === 'command' && w.warm_start === 'fork';
  const gpu = (input.device.gpu_memory_bytes ?? null) !== null;
  if (spec.bracket === 'fresh') return { mode: 'fresh', why: 'bracket: fresh' };
  if (spec.strategy !== 'tunebench')
    return { mode: 'fresh', why: `strategy: ${spec.strategy}, Lightning's BatchSizeFinder in mode binsearch` };
  if (spec.buckets) return { mode: 'fresh', why: 'buckets are searched in fresh processes' };
  if (input.trials.executor.kind !== 'local') return { mode: 'fresh', why: 'a SLURM stage runs every trial as a job' };
  if (spec.bracket === 'in-process') {
    if (!warm)
      throw new ConfigError(
        `stage ${spec.name ?? 'max-batch'}: bracket: in-process needs a Python script run through the adapter with ` +
          'workload.warm_start: fork (the session is a fork of its warm server); set warm_start: fork, or bracket: auto',
      );
    return { mode: 'in-process', why: 'bracket: in-process' };
  }
  if (warm && gpu) return { mode: 'in-process', why: 'auto: a warm-started workload on a GPU machine' };
  return { mode: 'fresh', why: warm ? 'auto: no GPU here' : 'auto: the workload is not warm-started' };
}

/** The bracket's attempts in one session, journaled as one trial; on resume, replayed from the journal. */
export async function runBracket({
  input,
  spec,
  name,
  options,
  onCard,
}: {
  input: StageInput;
  spec: Frozen<MaxBatchStageSpec>;
  name: string;
  options: MaxBatchOptions;
  /** The search works against the card's memory (device readings), not a host cap. */
  onCard: boolean;
}): Promise<{ hint: NonNullable<MaxBatchOptions['hint']>; record: TrialRecord; log: string[] }> {
  const o: BracketOptions = {
    multipleOf: spec.multiple_of,
    start: options.start,
    ceiling: spec.ceiling,
    // Only device memory places attempts: its peak counter is reset before each, while a host process's
    // peak RSS and address space only grow across its attempts (bisection places them there, as Lightning's).
    capBytes: onCard ? options.capBytes : null,
    maxAttempts: MAX_BRACKET_ATTEMPTS,
  };
  const exp = input.experiment;
  const config = { ...input.baseConfig };
  const index = input.trials.records.length;
  const done = input.trials.replayed(index);
  let b: Bracket = emptyBracket;
  const log: string[] = [];
  let record: TrialRecord;
  if (done !== undefined && (done.role.kind !== 'bracket' || done.stage !== name))
    throw new ConfigError(
      `cannot resume: journal trial ${index} is ${done.stage}/${roleText(done.role)}, but the experiment now asks for ` +
        `${name}/bracket (an in-process bracket); the journal was written by another tunebench version or with ` +
        'another bracket setting: start a new run, or set bracket: fresh',
    );
  if (done !== undefined) {
    for (const a of done.attempts ?? []) b = step(b, a, spec.multiple_of, 'replayed', log);
    record = done;
    input.trials.record(done, { replayed: true });
  } else {
    input.progress.note(`in-process bracket: attempts in one process of the workload, then fresh processes decide`);
    const session = openBracketSession(input.trial, {
      index,
      stage: name,
      param: spec.param,
      config: { ...config, [spec.param]: o.start },
      // Two steps in all: the second has the optimizer's state beside the gradients, a step's steady peak.
      measure: { warmupSteps: exp.measure.warmup_steps, steps: Math.max(1, 2 - exp.measure.warmup_steps) },
      attemptTimeoutSeconds: exp.limits.timeout,
    });
    for (let next = nextAttempt(b, o); next && session.alive; next = nextAttempt(b, o)) {
      const batch = next.k * spec.multiple_of;
      const a = await session.attempt({ ...config, [spec.param]: batch }, batch);
      b = step(b, a, spec.multiple_of, next.why, log);
      input.progress.note(`attempt ${b.steps.length} (${next.why}) ${spec.param}=${batch} -> ${describe(a)}`);
    }
    record = await session.end();
    input.trials.record(record);
  }
  // Host readings of one process only grow across its attempts: they would mislead the fresh search.
  const readings: Reading[] = !onCard
    ? []
    : b.steps
        .filter((s) => s.outcome === 'ok' && s.bytes !== null)
        .map((s) => ({ batch: s.k * spec.multiple_of, bytes: s.bytes! }));
  const hint = {
    lo: b.lo > 0 ? b.lo * spec.multiple_of : null,
    hi: b.hi !== null ? b.hi * spec.multiple_of : null,
    readings,
  };
  log.push(
    `in-process bracket: ${b.steps.length} attempt(s) in ${record.wall_seconds.toFixed(1)} s: ` +
      `${hint.lo ?? 'none'} passed, ${hint.hi ?? 'none'} failed there${b.broken ? ' (stopped: an attempt failed other than by memory)' : ''}`,
  );
  return { hint, record, log };
}

function step(b: Bracket, a: BracketAttempt, m: number, why: string, log: string[]): Bracket {
  log.push(`attempt (${why}): ${a.batch} ${a.outcome}`);
  return withAttempt(b, {
    k: Math.round(a.batch / m),
    outcome: a.outcome,
    bytes: a.outcome === 'ok' ? a.peak_bytes : null,
    why,
  });
}

function describe(a: BracketAttempt): string {
  const mem = a.peak_bytes !== null ? `, peak ${formatBytes(a.peak_bytes)}` : '';
  return `${a.outcome}${mem} (${a.seconds.toFixed(2)} s)`;
}
