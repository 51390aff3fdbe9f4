// Decides a trial's outcome: structured signals first (events, exit status, signal), message patterns second.
import { INVALID_EXIT_CODE, OOM_EXIT_CODE, type WorkloadEvent } from '../workloads/protocol/events.js';
import { matchOom } from '../workloads/protocol/oom-patterns.js';
import type { Outcome } from '../domain/index.js';
import { stepEventCount } from './counted-events.js';

export interface Observation {
  events: readonly WorkloadEvent[];
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** The harness sent the kill (timeout or user stop), so SIGKILL is not the OOM killer's. */
  killedByHarness: boolean;
  /** OOM kills counted by the trial's cgroup, when one was used. */
  cgroupOomKills: number;
  stderr: string;
  /** Whether a workload without events counts as ok (command workloads get whole-process timing). */
  eventsRequired: boolean;
  malformedEvents: number;
  /** The address-space cap (prlimit --as) the trial ran under, in bytes; null under any other mechanism. */
  addressSpaceCap?: number | null;
}

export interface Classification {
  outcome: Outcome;
  reason: string;
  /**
   * The cap itself stopped the program before its first step (it could not load its libraries under an
   * address-space cap): every trial would fail so, whatever its config, and the run stops with the fix.
   */
  limitProblem?: true;
  /** The program itself could not be executed (exit 126/127 and the shell's or the kernel's word): a fact, not text. */
  notStarted?: true;
}

/**
 * What the dynamic loader or Python prints when an address-space cap leaves no room to map a shared
 * library: glibc's "failed to map segment from shared object", or "cannot allocate memory" while loading.
 */
const CANNOT_LOAD =
  /^.*(failed to map segment from shared object|error while loading shared libraries: .*cannot allocate memory|ImportError: .*cannot allocate memory).*$/m;

/** A failure to load libraries under an address-space cap, before any step: a limit problem, not a crash. */
function limitProblem(o: Observation): Classification | undefined {
  if (o.addressSpaceCap == null || stepEventCount(o.events) > 0 || o.exitCode === 0) return undefined;
  const line = CANNOT_LOAD.exec(o.stderr)?.[0]?.trim();
  if (line === undefined) return undefined;
  const gib = (o.addressSpaceCap / 2 ** 30).toFixed(1);
  return {
    outcome: 'invalid',
    limitProblem: true,
    reason:
      `the address-space cap (prlimit --as, ${gib} GiB from limits.memory) stopped the program before its first ` +
      `step, while it loaded its libraries ("${line.slice(0, 160)}"): an address-space cap counts every mapping, and ` +
      'CUDA and large libraries reserve far more than they use. Use a memory cgroup (limits.mechanism: cgroup, ' +
      'run as root or in a delegated cgroup), raise limits.memory, or remove it',
  };
}

export function classify(o: Observation): Classification {
  const has = (name: string) => o.events.find((e) => e.event === name);
  if (o.timedOut) return { outcome: 'timeout', reason: 'exceeded limits.timeout; the process tree was killed' };
  const oom = has('oom');
  if (oom) {
    // Of a multi-rank trial (workload.launcher), the first rank that ran out; the launcher's exit says nothing more.
    const rank = typeof oom['rank'] === 'number' ? ` (rank ${oom['rank']})` : '';
    return { outcome: 'oom', reason: `oom event from the workload${rank}: ${String(oom['message']).slice(0, 200)}` };
  }
  if (o.cgroupOomKills > 0)
    return { outcome: 'oom', reason: `killed by the kernel OOM killer (cgroup oom_kill=${o.cgroupOomKills})` };
  if (o.exitCode === OOM_EXIT_CODE)
    return { outcome: 'oom', reason: `exit code ${OOM_EXIT_CODE} (the workload's out-of-memory exit)` };
  const error = has('error');
  const limit = limitProblem(o);
  if (limit) return limit;
  if (o.exitCode === INVALID_EXIT_CODE) {
    return {
      outcome: 'invalid',
      reason:
        'the workload rejected its configuration: ' +
        `${error ? String(error['message']) : `exit code ${INVALID_EXIT_CODE}`}`,
    };
  }
  if (o.signal === 'SIGKILL' && !o.killedByHarness) {
    return { outcome: 'oom', reason: 'SIGKILL not sent by tunebench (the kernel OOM killer is the usual sender)' };
  }
  if (o.exitCode === 0 && o.signal === null) {
    const steps = stepEventCount(o.events);
    if (o.eventsRequired && steps === 0) {
      const garbage = o.malformedEvents > 0 ? ` (${o.malformedEvents} malformed event line(s))` : '';
      return { outcome: 'invalid', reason: `exited 0 without reporting any step${garbage}` };
    }
    return {
      outcome: 'ok',
      reason: steps > 0 ? `exited 0 after ${steps} step event(s)` : 'exited 0 (no events: whole-process timing)',
    };
  }
  const status = o.signal ? `signal ${o.signal}` : `exit code ${o.exitCode}`;
  // 126/127 from prlimit or the kernel: the program itself could not be executed.
  const notStarted =
    (o.exitCode === 126 || o.exitCode === 127) &&
    /failed to execute|No such file or directory|Permission denied|not found/i.exec(o.stderr);
  if (notStarted)
    return {
      outcome: 'invalid',
      reason: `could not start the program (${status}): ${o.stderr.trim().split('\n').pop()}`,
      notStarted: true,
    };
  const pattern = matchOom(`${error ? String(error['message']) : ''}\n${o.stderr}`);
  if (pattern)
    return {
      outcome: 'oom',
      reason: `${status} and an out-of-memory message (${pattern.source}: ${pattern.pattern.source})`,
    };
  return { outcome: 'crash', reason: error ? `${status}: ${String(error['message']).slice(0, 200)}` : status };
}
