// Runs one trial as a fresh process group: memory cap, timeout with process-tree kill, events and stderr tail.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { ConfigError, TrialError } from '../errors.js';
import { processTree } from '../telemetry/proc-tree.js';
import { TelemetrySampler, type Telemetry } from '../telemetry/sampler.js';
import { ENV, type WorkloadEvent } from '../workloads/protocol/events.js';
import { classify, type Classification } from './classify.js';
import { EventReader } from './event-reader.js';
import { enterCgroup, leaveCgroup, planLimit, type MechanismChoice, type MemoryLimit } from './limits.js';
import { TailBuffer } from './tail.js';

export interface ProcessTrialSpec {
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string;
  timeoutSeconds: number;
  memoryBytes?: number;
  mechanism: MechanismChoice;
  /** Whether exiting 0 without step events is `invalid` (true for tunebench's own workloads). */
  eventsRequired: boolean;
  /** Scratch directory for the events file; removed afterwards. */
  scratchDir: string;
  trialId: string;
  onEvent?: (event: WorkloadEvent) => void;
  /** Aborting stops the trial (SIGTERM, then SIGKILL) without classifying it as a timeout. */
  signal?: AbortSignal;
}

export interface ProcessTrialResult extends Classification {
  events: WorkloadEvent[];
  malformedEvents: number;
  exitCode: number | null;
  signal: string | null;
  stderrTail: string;
  wallSeconds: number;
  peakTreeRssBytes: number;
  telemetry: Telemetry;
  cgroupPeakBytes: number | null;
  limit: MemoryLimit;
  aborted: boolean;
}

/** Seconds between SIGTERM and SIGKILL when a trial is stopped. */
export const KILL_GRACE_SECONDS = 2;
const POLL_MS = 200;

export async function runProcessTrial(spec: ProcessTrialSpec): Promise<ProcessTrialResult> {
  const limit = planLimit(spec.memoryBytes, spec.mechanism, spec.trialId);
  mkdirSync(spec.scratchDir, { recursive: true });
  const eventsPath = join(spec.scratchDir, `${spec.trialId}.events.jsonl`);
  rmSync(eventsPath, { force: true });
  const argv = [...limit.prefix, ...spec.argv];
  const started = process.hrtime.bigint();
  const child = execa(argv[0]!, argv.slice(1), {
    cwd: spec.cwd,
    env: { ...spec.env, [ENV.events]: eventsPath, [ENV.trialId]: spec.trialId },
    extendEnv: true,
    detached: true,
    reject: false,
    buffer: false,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const pid = child.pid;
  const stderr = new TailBuffer(8 * 1024);
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  child.stdout?.on('data', () => undefined); // drained and ignored: stdout is not part of the protocol
  if (pid === undefined) {
    const result = await child;
    throw new ConfigError(`could not start ${JSON.stringify(argv[0])}: ${result.shortMessage ?? result.message}; check workload.command (and workload.python)`);
  }
  try {
    enterCgroup(limit, pid);
  } catch (error) {
    killTree(pid, 'SIGKILL');
    throw new TrialError(`could not place the trial in cgroup ${limit.cgroupDir}: ${String(error)}`, { cause: error });
  }

  const reader = new EventReader(eventsPath);
  const sampler = new TelemetrySampler(pid);
  sampler.start();
  let timedOut = false;
  let killedByHarness = false;
  const stop = (): void => {
    killedByHarness = true;
    killTree(pid, 'SIGTERM');
    setTimeout(() => killTree(pid, 'SIGKILL'), KILL_GRACE_SECONDS * 1000).unref();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, spec.timeoutSeconds * 1000);
  const onAbort = (): void => stop();
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  const poller = setInterval(() => {
    for (const e of reader.poll()) spec.onEvent?.(e);
  }, POLL_MS);

  const result = await child;
  clearTimeout(timer);
  clearInterval(poller);
  spec.signal?.removeEventListener('abort', onAbort);
  const telemetry = sampler.stop();
  // Orphans left in the group (a worker the child forked) must not outlive the trial.
  killTree(pid, 'SIGKILL');
  for (const e of reader.finish()) spec.onEvent?.(e);
  const cgroup = leaveCgroup(limit);
  rmSync(eventsPath, { force: true });

  if (result.failed && result.exitCode === undefined && result.signal === undefined && !killedByHarness) {
    // execa could not spawn the program at all (ENOENT, EACCES): the experiment names a bad program.
    throw new ConfigError(`could not start ${JSON.stringify(spec.argv[0])}: ${result.shortMessage ?? result.message}; check workload.command (and workload.python)`);
  }
  const exitCode = result.exitCode ?? null;
  const signal = result.signal ?? null;
  const stderrTail = stderr.text();
  const classification = classify({
    events: reader.events,
    exitCode,
    signal,
    timedOut,
    killedByHarness,
    cgroupOomKills: cgroup.oomKills,
    stderr: stderrTail,
    eventsRequired: spec.eventsRequired,
    malformedEvents: reader.malformed,
  });
  return {
    ...classification,
    events: reader.events,
    malformedEvents: reader.malformed,
    exitCode,
    signal,
    stderrTail,
    wallSeconds: Number(process.hrtime.bigint() - started) / 1e9,
    peakTreeRssBytes: sampler.peakRss,
    telemetry,
    cgroupPeakBytes: cgroup.peakBytes,
    limit,
    aborted: killedByHarness && !timedOut,
  };
}

/** Signals the process group and every descendant found in /proc (some may have left the group). */
export function killTree(pid: number, signal: NodeJS.Signals): void {
  let tree: number[] = [];
  try {
    tree = processTree(pid);
  } catch {
    tree = [pid];
  }
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
  for (const p of tree) {
    try {
      process.kill(p, signal);
    } catch {
      // Exited meanwhile.
    }
  }
}
