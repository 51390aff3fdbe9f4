// The experiment file's schema: the one source of truth for validation, types, defaults and the
// exported JSON Schema. Workloads are in schema/workload.ts, stages in schema/stages.ts.
import { z } from 'zod';
import { duration, nonNegativeInt, object, oneOf, positiveInt, size, str } from './fields.js';
import { parseWith, type Parsed } from './issues.js';
import { type claimStage, type compareStage, type maxBatchStage, stage, type sweepStage } from './schema/stages.js';
import { type commandWorkload, workload } from './schema/workload.js';

export const MAX_TRIAL_TIMEOUT_SECONDS = 7 * 86400;
export const MAX_POLL_SECONDS = 3600;
/**
 * The largest limits.memory validation accepts anywhere (1 PiB): above it a cap is a typo, and the
 * kernel's limits misbehave (every trial dies of SIGSEGV). The machine that runs the trials refuses
 * a cap above its own memory when the run starts (machine-fit.ts); SLURM nodes are checked there.
 */
export const MAX_MEMORY_LIMIT_BYTES = 2 ** 50;
/** The smallest limits.memory: below it no workload starts, and the failure would be blamed on the cgroup. */
export const MIN_MEMORY_LIMIT_BYTES = 16 * 2 ** 20;
/** A trial's most processes and threads (pids.max) without limits.pids: many DataLoader workers times their threads. */
export const DEFAULT_TRIAL_PIDS = 4096;

const limits = object({
  memory: size('hard memory cap for each trial', {
    bytes: MAX_MEMORY_LIMIT_BYTES,
    why: 'no machine has that much memory: give the cap for one trial, such as "16GiB", or leave limits.memory out',
    min: {
      bytes: MIN_MEMORY_LIMIT_BYTES,
      why: 'no interpreter starts in less (a bare Python takes about 10 MiB): a number without units is bytes, so write "1GiB", not 1',
    },
  }).optional(),
  mechanism: oneOf(
    ['auto', 'prlimit', 'cgroup', 'none'] as const,
    'how the cap is enforced; auto picks cgroup v2 where writable, else prlimit',
  ).default('auto'),
  timeout: duration('wall-clock limit for one trial; the whole process tree is killed after it', {
    seconds: MAX_TRIAL_TIMEOUT_SECONDS,
    why: 'a trial that runs longer is stuck, and Node.js cannot time waits beyond 24.8 days; lower limits.timeout',
  }).default(300),
  user: str({
    pattern: /^([a-z_][a-z0-9_.-]*\$?|\d+)$/,
    hint: 'a user name or a numeric uid, such as "nobody"',
    description:
      'run each trial as this unprivileged user (tunebench runs as root): a workload that is not root cannot ' +
      'undo its cgroups (lift its cap, leave them); it needs to read the workload and may write only its own files',
  }).optional(),
  cgroupfs: oneOf(
    ['writable', 'read-only'] as const,
    'read-only: each trial runs in a cgroup namespace with the cgroup filesystem read-only and without ' +
      'CAP_SYS_ADMIN, so a workload that must run as root still cannot undo its cgroups (tunebench as root); default writable',
  ).optional(),
  pids: positiveInt(
    `most processes and threads one trial may have at once (a pids cgroup; default ${DEFAULT_TRIAL_PIDS}): a fork bomb ends the trial, not the machine`,
  ).optional(),
});

const measure = object({
  warmup_steps: nonNegativeInt('untimed steps before measuring').default(2),
  steps: positiveInt('timed steps per trial').default(10),
});

const objective = object({
  maximize: oneOf(['samples_per_second'] as const).default('samples_per_second'),
  constraints: object({
    p95_step_latency: duration('largest allowed 95th-percentile step latency').optional(),
    p50_step_latency: duration('largest allowed median step latency').optional(),
  }).prefault({}),
});

const executor = object(
  {
    kind: oneOf(
      ['local', 'slurm'] as const,
      'local: every trial here, one at a time; ' +
        'slurm: sweeps, compares and claims as job arrays, max-batch inside one allocation',
    ),
    partition: str({ description: 'sbatch --partition' }).optional(),
    account: str({ description: 'sbatch --account' }).optional(),
    gres: str({ description: 'sbatch --gres per task, e.g. "gpu:1"' }).optional(),
    cpus_per_task: positiveInt('sbatch --cpus-per-task').optional(),
    mem: str({
      pattern: /^\d+[KMGT]?$/,
      hint: 'SLURM memory such as "32G" or "4000M"',
      description: 'sbatch --mem per task',
    }).optional(),
    time: str({
      pattern: /^(\d+-)?\d+(:\d+){0,2}$/,
      hint: 'SLURM time such as "30", "00:30:00" or "1-00:00:00"',
      description: 'sbatch --time per task',
    }).optional(),
    constraint: str({ description: 'sbatch --constraint, e.g. "a100|h100"' }).optional(),
    extra_args: z.array(str()).describe('more sbatch arguments, each one element, e.g. ["--qos=high"]').prefault([]),
    max_concurrent: positiveInt('K in sbatch --array=0-(N-1)%K: array tasks that may run at once').default(4),
    retries: nonNegativeInt(
      'times a task that ended FAILED, TIMEOUT, OUT_OF_MEMORY, ' +
        'CANCELLED or NODE_FAIL without a record is submitted again',
    ).default(1),
    poll: duration('the longest wait between two looks at squeue/sacct (the wait starts at 0.5 s and grows)', {
      seconds: MAX_POLL_SECONDS,
      why: 'a longer wait only delays noticing finished tasks; lower executor.poll',
    }).default(10),
  },
  'Where trials run.',
);

export const experimentSchema = object(
  {
    $schema: str().optional(),
    name: str({
      pattern: /^(?=.*\S)[^\u0000-\u001f\u007f]{1,120}$/,
      hint: 'a name of 1 to 120 printable characters',
      description:
        'names the run; ' +
        'its directory is the name with characters other than letters, digits, ".", "_" and "-" replaced by "_"',
    }),
    description: str().optional(),
    seed: nonNegativeInt('seed for everything random in the run').default(1),
    workload,
    // Sections left out take their fields' defaults (stated once, on the fields).
    limits: limits.prefault({}),
    measure: measure.prefault({}),
    objective: objective.prefault({}),
    executor: executor.prefault({ kind: 'local' }),
    stages: z.array(stage).min(1),
  },
  'A tunebench experiment: a workload, limits, measurement settings and an ordered list of stages.',
);

export type Experiment = z.output<typeof experimentSchema>;
export type StageSpec = Experiment['stages'][number];
export type MaxBatchStageSpec = z.output<typeof maxBatchStage>;
export type SweepStageSpec = z.output<typeof sweepStage>;
export type CompareStageSpec = z.output<typeof compareStage>;
export type ClaimStageSpec = z.output<typeof claimStage>;
export type CommandWorkloadSpec = z.output<typeof commandWorkload>;
export type ExecutorSpec = Experiment['executor'];
export type { ParamValue } from '../domain/params.js';
export {
  STAGE_KINDS,
  stageOutcomeSchema,
  SWEEP_REPEATS,
  type StageKind,
  type StageOutcome,
  type StageOutcomeOf,
  type StageResults,
} from './schema/stages.js';

/** Validates a parsed experiment file: the experiment with its defaults, or every problem found. */
export function parseExperiment(raw: unknown): Parsed<Experiment> {
  return parseWith(experimentSchema, raw);
}

export function jsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(experimentSchema, {
    target: 'draft-2020-12',
    // The file as written: defaults make fields optional, units are numbers or strings.
    io: 'input',
    override: ({ jsonSchema: json }) => {
      // zod bounds every integer to the safe range; only the bounds the schema states are worth showing.
      if (json.maximum === Number.MAX_SAFE_INTEGER) delete json.maximum;
      if (json.minimum === Number.MIN_SAFE_INTEGER) delete json.minimum;
    },
  });
  const { $schema, ...rest } = generated;
  return { $schema, $id: 'https://tunebench.dev/schema/experiment.json', title: 'tunebench experiment', ...rest };
}
