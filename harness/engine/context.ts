// What a stage receives and what runs its trials. A stage is a function: a frozen StageInput in (the
// experiment, the run's config and earlier outcomes as they stand, the device, and a TrialRunner), its
// StageOutcome out. The TrialRunner is the one stateful thing a stage is handed: it owns the journal, the
// replay of a resumed run and the records, so that a stage never writes the run's state itself.
import { dirname } from 'node:path';
import { ConfigError, StoreError } from '../errors.js';
import { formatBytes } from '../experiment/units.js';
import { freeBytes, MIN_FREE_BYTES } from '../store/atomic.js';
import type { Experiment } from '../experiment/schema.js';
import type { Journal } from '../store/journal.js';
import type { RunLock } from '../store/lock.js';
import type { TrialContext } from '../trial/run-trial.js';
import { canonicalConfig, type Executor, type TrialSpec } from '../executors/executor.js';
import type { Progress } from '../executors/progress.js';
import type { Config, Fingerprint, TrialRecord } from '../domain/index.js';
import { deviceName, roleText, sameRole, type Role } from '../domain/index.js';
import type { Frozen } from '../util/frozen.js';
import type { StageOutcome } from '../experiment/schema.js';

/**
 * Everything a stage reads, frozen: no field is filled in later and none may be written
 * (test/unit/code/stage-input.test.ts checks the type). What a stage changes, it returns.
 */
export interface StageInput {
  readonly experiment: Frozen<Experiment>;
  /** Fixed parameters plus the values earlier stages chose, as revised so far. */
  readonly baseConfig: Readonly<Config>;
  /** The stages that finished before this one, in order. */
  readonly outcomes: Frozen<StageOutcome[]>;
  /** The device this stage's trials run on: this machine, or a SLURM stage's allocation. */
  readonly device: Readonly<StageDevice>;
  /** One line naming the machine (host, CPU, GPU), for sentences in reports. */
  readonly environment: string;
  /** Whether an NVIDIA GPU was found: claims that need CUDA are skipped without one. */
  readonly hasCuda: boolean;
  /** The workload, limits and warm pool every trial runs with (the pool and the signal are behaviours, as they are). */
  readonly trial: Frozen<Omit<TrialContext, 'warm' | 'signal'>> & Readonly<Pick<TrialContext, 'warm' | 'signal'>>;
  /** Runs, journals and replays the stage's trials. */
  readonly trials: TrialRunner;
  readonly progress: Progress;
}

/** What every stage of a run shares: the StageInput less what changes from stage to stage. */
export interface RunContext extends Omit<StageInput, 'baseConfig' | 'outcomes' | 'device'> {
  /** The device of this machine; a stage replayed from a SLURM allocation gets its own (stageDevices). */
  readonly device: Readonly<StageDevice>;
  /** Of a SLURM stage worker: the devices earlier stages ran on in their own allocations, by stage index. */
  readonly stageDevices?: ReadonlyMap<number, StageDevice>;
  /** The config the first stage starts from: the workload's fixed parameters. */
  readonly initialConfig: Readonly<Config>;
}

/** The input of a stage that starts from `state` (the run's config and outcomes so far), on `device`. */
export function stageInput(
  run: RunContext,
  state: { readonly config: Readonly<Config>; readonly outcomes: Frozen<StageOutcome[]> },
  device: Readonly<StageDevice> = run.device,
): StageInput {
  const { experiment, trial, trials, progress, environment, hasCuda } = run;
  return {
    experiment,
    trial,
    trials,
    progress,
    environment,
    hasCuda,
    device,
    baseConfig: state.config,
    outcomes: state.outcomes,
  };
}

/** A machine as a stage sees it: its host, device class and GPU memory (null without a GPU). */
export interface StageDevice {
  host: string;
  /** The GPU name, or the CPU model without one. */
  name: string;
  gpu_memory_bytes: number | null;
}

/** The device of a machine from its fingerprint (`host`: the name its trial records carry). */
export function deviceOf(env: Fingerprint, host: string = env.host): StageDevice {
  return {
    host,
    name: deviceName(env),
    gpu_memory_bytes: env.gpu && env.gpu.memory_bytes > 0 ? env.gpu.memory_bytes : null,
  };
}

/** Where a trial stands in its stage, for the progress line. */
export interface TrialPosition {
  n: number;
  ofAbout: number;
  show: string[];
  etaSeconds?: number;
}

/**
 * The run's trials: runs each one on the executor and journals it before returning it. On resume, trial i
 * returns the journal's record i instead of running again, so each stage retraces its decisions up to where
 * the run was stopped.
 */
export class TrialRunner {
  readonly #records: TrialRecord[] = [];
  #replay: TrialRecord[];
  /** How many of the replayed trials the journal already holds; the rest (from a SLURM allocation) are appended. */
  readonly #journaled: number;

  constructor(
    readonly journal: Journal,
    readonly executor: Executor,
    private readonly progress: Progress,
    private readonly opts: {
      replay: readonly TrialRecord[];
      journaled: number;
      /** The run directory's lock (absent in a SLURM stage worker): checked before each trial. */
      lock?: Pick<RunLock, 'check'>;
    },
  ) {
    this.#replay = [...opts.replay];
    this.#journaled = opts.journaled;
  }

  /** Every record so far in this run, in journal order. */
  get records(): readonly TrialRecord[] {
    return this.#records;
  }

  /** The journal's record of trial `index` on resume (undefined: it runs). */
  replayed(index: number = this.#records.length): TrialRecord | undefined {
    return this.#replay[index];
  }

  /** The trials a resumed run replays, in all. */
  get replayLength(): number {
    return this.#replay.length;
  }

  /** The trials a SLURM allocation ran join the replay: the stage retraces them here. */
  addReplay(records: readonly TrialRecord[]): void {
    const known = this.#replay.length;
    this.#replay = [...this.#replay, ...records.filter((r) => r.index >= known)];
  }

  /** Runs one trial, journals it before returning, and reports progress. */
  async run(trial: TrialSpec, position: TrialPosition): Promise<TrialRecord> {
    const { stage, role, config, measure, argv, deviceBound, timeoutSeconds } = trial;
    const index = this.#records.length;
    const done = this.#replay[index];
    if (done) {
      assertSameTrial(done, { index, stage, role, config, argv });
      if (index >= this.#journaled) this.journal.append(done);
      this.#records.push(done);
      return done;
    }
    this.assertCanRecord(index);
    this.progress.trialStart({
      stage,
      n: position.n,
      ofAbout: position.ofAbout,
      config,
      role: roleText(role),
      show: position.show,
      ...(position.etaSeconds !== undefined ? { etaSeconds: position.etaSeconds } : {}),
    });
    const spec = {
      stage,
      role,
      config,
      measure,
      ...(argv ? { argv } : {}),
      ...(deviceBound ? { deviceBound } : {}),
      ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
    };
    const record = await this.executor.run(index, spec, (e) => this.progress.trialEvent(e));
    const journalDir = dirname(this.journal.path);
    const after = freeBytes(journalDir);
    if (record.outcome !== 'ok' && after !== null && after < MIN_FREE_BYTES / 2) {
      // The trial's own files (its events) live on this disk: a failure now may be the disk's, not the workload's.
      throw new StoreError(
        `the disk holding ${journalDir} filled up during trial ${index} (${formatBytes(after)} free); ` +
          `its outcome "${record.outcome}" may be the disk's fault, so it is not recorded`,
      );
    }
    this.journal.append(record);
    this.#records.push(record);
    this.progress.trialEnd(record);
    return record;
  }

  /**
   * Journals a record the stage ran itself (a bracket session); `replayed`: the journal's own record on
   * resume, appended again only where the journal does not hold it yet.
   */
  record(record: TrialRecord, opts: { replayed?: boolean } = {}): void {
    if (!opts.replayed || this.#records.length >= this.#journaled) this.journal.append(record);
    this.#records.push(record);
    if (!opts.replayed) this.progress.trialEnd(record);
  }

  /**
   * Announces the trials a stage runs next, in order, so that a parallel executor can start them
   * together. Trials the journal already holds (resume) are not announced again.
   */
  async plan(trials: readonly TrialSpec[]): Promise<void> {
    const first = this.#records.length;
    const done = Math.max(0, this.#replay.length - first);
    if (trials.length > done) await this.executor.plan(first + done, trials.slice(done));
  }

  /**
   * `count` untimed trials of each arm, in turn, before a stage's first timed trial (warm file caches,
   * JIT, lazy imports). They are journaled like any trial (so a resumed run retraces them), and no
   * statistic uses them. A failed warm-up is noted: the timed trials of that arm will say more.
   */
  async warmups(stage: string, count: number, arms: readonly TrialSpec[], show: string[]): Promise<void> {
    if (count === 0 || arms.length === 0) return;
    const all = Array.from({ length: count }, (_, k) =>
      arms.map((a): TrialSpec => ({ ...a, role: { kind: 'warm-up', round: k + 1 } })),
    ).flat();
    await this.plan(all);
    for (const [i, t] of all.entries()) {
      const record = await this.run(t, { n: i + 1, ofAbout: all.length, show });
      if (record.outcome !== 'ok')
        this.progress.note(`${stage}: warm-up trial ${record.index} ended ${record.outcome} (${record.reason})`);
    }
  }

  /** Before a trial runs: this tunebench still holds the run directory, and its disk has room for the record. */
  private assertCanRecord(index: number): void {
    const lost = this.opts.lock?.check();
    if (lost)
      throw new StoreError(
        `the run stopped before trial ${index}: this tunebench no longer holds its run directory (${lost}); two ` +
          'runs never write one journal. The completed trials are kept: once no other tunebench uses the directory, resume it',
      );
    const journalDir = dirname(this.journal.path);
    const free = freeBytes(journalDir);
    if (free !== null && free < MIN_FREE_BYTES) {
      throw new StoreError(
        `the disk holding ${journalDir} is full: ${formatBytes(free)} free, ` +
          `and tunebench needs ${formatBytes(MIN_FREE_BYTES)} to record trial ${index}`,
      );
    }
  }
}

/** A journaled trial must be the trial the stage asks for again; anything else means the run cannot be replayed. */
function assertSameTrial(
  done: TrialRecord,
  want: { index: number; stage: string; role: Role; config: Config; argv: readonly string[] | undefined },
): void {
  const same =
    done.stage === want.stage &&
    sameRole(done.role, want.role) &&
    JSON.stringify(canonicalConfig(done.config)) === JSON.stringify(canonicalConfig(want.config)) &&
    JSON.stringify(done.argv ?? null) === JSON.stringify(want.argv ?? null);
  if (!same) {
    throw new ConfigError(
      `cannot resume: journal trial ${want.index} is ${done.stage}/${roleText(done.role)} ` +
        `${JSON.stringify(canonicalConfig(done.config))}, ` +
        `but the experiment now asks for ${want.stage}/${roleText(want.role)} ${JSON.stringify(canonicalConfig(want.config))}; ` +
        'the journal was written by another tunebench version or was edited; start a new run',
    );
  }
}
