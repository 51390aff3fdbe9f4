// What the coordinator does next for one array task, from what it saw last: a pure function, so that
// every branch of the poll loop is tested without a cluster. collect() in executor.ts does the looking
// (task files, squeue, sacct) and the doing (sbatch, sleep).
import type { TrialRecord } from '../../domain/index.js';
import type { TaskResult } from './batch.js';
import { ACTIVE_STATES } from './commands.js';

/** Polls that a task may be COMPLETED without its record showing (a shared filesystem's cache). */
export const COMPLETED_GRACE_POLLS = 6;
/** Seconds of the first wait; each later wait is 1.5 times longer, up to the executor's `poll`. */
export const FIRST_DELAY = 0.5;
/** Longest wait, in seconds, for the record of a finished task to show. */
const GRACE_DELAY = 2;
/** States a task passes through normally; any other (PREEMPTED, CANCELLED, ...) is noted once. */
const USUAL_STATES = new Set(['PENDING', 'RUNNING', 'COMPLETING']);
const UNKNOWN_WHY =
  'UNKNOWN (it left the queue, and neither sacct nor scontrol knows its final state: ' +
  'accounting is disabled, or it was cancelled before it started)';

export interface TaskView {
  /** The trial's journal index, for messages. */
  trial: number;
  /** What the task's result file holds. */
  result: TaskResult;
  /** Why the batch gave the task up earlier, or null. */
  givenUp: string | null;
  /** The coordinator was stopped (a signal). */
  stopped: boolean;
  /** The latest submission that covers the task: its job, and the task's id "<job>_<array index>"; null before one. */
  job: { id: string; task: string } | null;
  /** Submissions of the task so far (1 after the first). */
  attempts: number;
  /** SLURM's state of job.task: squeue's while queued, else sacct's or scontrol's, else "UNKNOWN"; null until asked. */
  state: string | null;
  /** The task's SLURM log, when it exists. */
  log: string | null;
}

export interface Policy {
  /** Submissions allowed after the first. */
  retries: number;
  /** Longest wait between polls, in seconds. */
  poll: number;
  /** --no-wait: return while tasks are queued or running. */
  noWait: boolean;
}

/** What one poll hands the next: how long to wait, and what was seen. */
export interface Poll {
  delay: number;
  graceLeft: number;
  lastState: string;
}

export const firstPoll = (): Poll => ({ delay: FIRST_DELAY, graceLeft: COMPLETED_GRACE_POLLS, lastState: '' });

export type Action =
  /** Its record is there: hand it back. */
  | { kind: 'collect'; record: TrialRecord }
  /** Given up earlier: hand back a crash record with this reason. */
  | { kind: 'crash'; reason: string }
  | { kind: 'stop' }
  /** No submission covers the task yet: submit it. */
  | { kind: 'submit' }
  /** Ask SLURM for the task's state, then look again. */
  | { kind: 'query'; job: string; task: string }
  /** Queued or running, or finished with its record not showing yet: sleep, then look again. */
  | { kind: 'wait'; seconds: number; poll: Poll; notes: string[] }
  /** Queued or running under --no-wait: the coordinator returns; collect goes on later. */
  | { kind: 'detach'; job: string; notes: string[] }
  /** Ended without a usable record, with retries left. */
  | { kind: 'resubmit'; poll: Poll; notes: string[] }
  /** Ended without a usable record, retries used up: record it as a crash for this reason. */
  | { kind: 'give-up'; reason: string; poll: Poll; notes: string[] };

export function nextAction(t: TaskView, poll: Poll, policy: Policy): Action {
  if (t.result.kind === 'record') return { kind: 'collect', record: t.result.record };
  if (t.givenUp !== null) return { kind: 'crash', reason: t.givenUp };
  if (t.stopped) return { kind: 'stop' };
  if (!t.job) return { kind: 'submit' };
  if (t.state === null) return { kind: 'query', job: t.job.id, task: t.job.task };
  const state = t.state;
  const name = `task ${t.job.task} (trial ${t.trial})`;
  const notes =
    state !== poll.lastState && !USUAL_STATES.has(state)
      ? [`${name} is ${state}${state === 'PREEMPTED' ? ': waiting for it to run again' : ''}`]
      : [];
  const seen: Poll = { ...poll, lastState: state };
  if (ACTIVE_STATES.has(state)) {
    if (policy.noWait) return { kind: 'detach', job: t.job.id, notes };
    return {
      kind: 'wait',
      seconds: poll.delay,
      poll: { ...seen, delay: Math.min(poll.delay * 1.5, policy.poll) },
      notes,
    };
  }
  if ((state === 'COMPLETED' || state === 'UNKNOWN') && poll.graceLeft > 0) {
    // Finished, but the record is not visible yet: give the shared filesystem a moment.
    return {
      kind: 'wait',
      seconds: Math.min(poll.delay, GRACE_DELAY),
      poll: { ...seen, graceLeft: poll.graceLeft - 1 },
      notes,
    };
  }
  const ended = state === 'UNKNOWN' ? UNKNOWN_WHY : state;
  // A damaged or foreign result file is a task that failed: said once it counts, with the file and field.
  const unusable = t.result.kind === 'damaged' ? `; its result file cannot be used: ${t.result.problem}` : '';
  if (t.attempts <= policy.retries) {
    const again =
      `${name} ended ${ended} without a record; ` +
      `submitting it again (attempt ${t.attempts + 1} of ${policy.retries + 1})${unusable}`;
    return {
      kind: 'resubmit',
      poll: { ...seen, delay: FIRST_DELAY, graceLeft: COMPLETED_GRACE_POLLS },
      notes: [...notes, again],
    };
  }
  const reason =
    `SLURM task ${t.job.task} ended ${ended} after ${t.attempts} attempt(s) ` +
    `without writing a trial record${t.log ? ` (log: ${t.log})` : ''}${unusable}`;
  return { kind: 'give-up', reason, poll: seen, notes: [...notes, `${reason}; it is recorded as a crash`] };
}
