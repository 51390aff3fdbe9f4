// A bracket session: one process of the workload (a fork of its warm server, or a fresh one) that runs
// in-process attempts at the batch sizes the harness asks for, one after another. The harness appends
// each request to the session's control file; the adapter runs it and ends the attempt's own events
// file with an `attempt` event. A pass here is a lower bound and an OOM only a hint (docs/max-batch.md).
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ratioThroughput } from '../stats/throughput.js';
import { ENV, parseEventLine, type AttemptEvent, type WorkloadEvent } from '../workloads/protocol/events.js';
import type { MeasureSteps } from '../workloads/workload.js';
import { runTrial, type TrialContext } from './run-trial.js';
import { giveTo, resolveUser } from './run-as.js';
import type { BracketAttempt, Config, TrialRecord, TrialTimeline } from '../domain/index.js';

/** The variable that turns a trial of the Python adapter into a bracket session: its control file. */
export const BRACKET_ENV = 'TUNEBENCH_BRACKET';
/** How often the harness looks for an attempt's end. */
const ATTEMPT_POLL_MS = 10;

export interface BracketSession {
  /** Runs one attempt with this config (the batch in it); resolves with its outcome. */
  attempt(config: Config, batch: number): Promise<BracketAttempt>;
  /** Whether the session's process is still there to take attempts. */
  readonly alive: boolean;
  /** Ends the session; its record carries every attempt. */
  end(): Promise<TrialRecord>;
}

export interface BracketRequest {
  index: number;
  stage: string;
  /** The parameter the attempts vary (batch_size). */
  param: string;
  config: Config;
  measure: MeasureSteps;
  /** Longest an attempt may take before the session is ended (the trial timeout). */
  attemptTimeoutSeconds: number;
}

export function openBracketSession(ctx: TrialContext, req: BracketRequest): BracketSession {
  const id = `b${String(req.index).padStart(4, '0')}`;
  const control = join(ctx.scratchDir, `${id}.control`);
  writeFileSync(control, '', { mode: 0o600 });
  // Run as another user (limits.user), the session reads the control file and appends to files given to it.
  const runAs = ctx.limits.user !== undefined ? resolveUser(ctx.limits.user) : undefined;
  giveTo(control, runAs);
  const attempts: BracketAttempt[] = [];
  let alive = true;
  let ended: TrialRecord | Error | undefined;
  const record = runTrial(ctx, {
    index: req.index,
    stage: req.stage,
    role: { kind: 'bracket' },
    config: req.config,
    measure: req.measure,
    env: { [BRACKET_ENV]: control },
    session: true,
  }).then(
    (r) => (ended = r),
    (e: unknown) => (ended = e instanceof Error ? e : new Error(String(e))),
  );
  void record.finally(() => (alive = false));
  let n = 0;
  return {
    get alive() {
      return alive;
    },
    async attempt(config, batch) {
      n += 1;
      const events = join(ctx.scratchDir, `${id}.a${n}.events.jsonl`);
      if (runAs) {
        writeFileSync(events, '', { mode: 0o600 });
        giveTo(events, runAs);
      }
      const command = ctx.workload.command({ ...ctx.workload.fixedParams, ...config }, req.measure);
      const env = { ...command.env, [ENV.events]: events, [ENV.trialId]: `${id}.a${n}` };
      appendFileSync(control, `${JSON.stringify({ argv: command.argv.slice(1), env })}\n`);
      const start = Date.now();
      try {
        const seen = await waitForAttempt(
          events,
          () => !alive || Date.now() - start > req.attemptTimeoutSeconds * 1000,
        );
        // The session ended during the attempt: the kernel's OOM killer under a cgroup cap is an OOM of this
        // attempt (a hint, as any in-process OOM); anything else ends the bracket.
        if (!seen && !alive) await record;
        const killed = !seen && ended !== undefined && !(ended instanceof Error) && ended.outcome === 'oom';
        const a: BracketAttempt = seen
          ? attemptOf(batch, seen.end, seen.events)
          : {
              batch,
              outcome: killed ? 'oom' : 'crash',
              peak_bytes: null,
              seconds: (Date.now() - start) / 1000,
              samples_per_second: null,
              message: alive
                ? `no answer within ${req.attemptTimeoutSeconds} s`
                : killed
                  ? `the session process was killed out of memory (${(ended as TrialRecord).reason})`
                  : 'the session process ended',
            };
        attempts.push(a);
        return a;
      } finally {
        rmSync(events, { force: true });
      }
    },
    async end() {
      if (alive) appendFileSync(control, `${JSON.stringify({ op: 'end' })}\n`);
      await record;
      rmSync(control, { force: true });
      if (ended instanceof Error) throw ended;
      const killedAt = ended!.outcome === 'oom' ? attempts.at(-1) : undefined;
      // Killed out of memory in an attempt: the record's OOM is that attempt's, at its batch.
      const r = killedAt ? { ...ended!, config: { ...ended!.config, [req.param]: killedAt.batch } } : ended!;
      return {
        ...r,
        reason: r.outcome === 'ok' ? `a bracket session of ${attempts.length} attempt(s)` : r.reason,
        ...(r.timeline ? { timeline: sessionTimeline(r.timeline, attempts) } : {}),
        attempts,
      };
    },
  };
}

/** A session's timeline: its attempts are its steps (the first pays the process's first use of the device). */
function sessionTimeline(t: TrialTimeline, attempts: readonly BracketAttempt[]): TrialTimeline {
  const steps = Math.round(attempts.reduce((a, x) => a + x.seconds, 0) * 1000) / 1000;
  const inside = (t.build ?? 0) + t.unaccounted;
  return { ...t, build: Math.max(0, Math.round((inside - steps) * 1000) / 1000), steps, warmup: null, unaccounted: 0 };
}

/** Polls the attempt's events file until its `attempt` event arrives, or `gone()` says it never will. */
async function waitForAttempt(
  path: string,
  gone: () => boolean,
): Promise<{ end: AttemptEvent; events: WorkloadEvent[] } | undefined> {
  for (;;) {
    const events = readEvents(path);
    const end = events.find((e): e is AttemptEvent => e.event === 'attempt');
    if (end) return { end, events };
    if (gone()) return undefined;
    await new Promise((r) => setTimeout(r, ATTEMPT_POLL_MS));
  }
}

function readEvents(path: string): WorkloadEvent[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  // Only whole lines: the last one may still be written.
  const lines = text.split('\n').slice(0, -1);
  return lines.map((l) => parseEventLine(l)).filter((e): e is WorkloadEvent => e != null);
}

/** One attempt's result from its end event and the steps it reported. */
export function attemptOf(batch: number, end: AttemptEvent, events: readonly WorkloadEvent[]): BracketAttempt {
  const steps = events.filter((e) => e.event === 'step' && !e['warmup']);
  const stepPeaks = events.flatMap((e) =>
    e.event === 'step' && typeof e.memory_bytes === 'number' ? [e.memory_bytes] : [],
  );
  const peak = end.peak_device_bytes ?? (stepPeaks.length > 0 ? Math.max(...stepPeaks) : null);
  const outcome = end.ok ? 'ok' : end.oom ? 'oom' : end.error === 'InvalidConfig' ? 'invalid' : 'crash';
  return {
    batch,
    outcome,
    peak_bytes: peak,
    seconds: end.seconds,
    samples_per_second:
      end.ok && steps.length > 0
        ? ratioThroughput(steps.map((s) => ({ samples: Number(s['samples']), seconds: Number(s['seconds']) })))
        : null,
    ...(end.ok ? {} : { message: `${end.error ?? 'error'}: ${end.message ?? ''}`.slice(0, 300) }),
  };
}
