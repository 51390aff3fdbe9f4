// The H200 records (test/fixtures/gpu-records/h200-2026-11-28, copied from ../shared/gpu-records) turned
// into the replay file of test/bench/programs/cuda_replay.py, and the experiment that runs it through the
// real stage and trial code with the kit's max-batch stage. Every number comes from the records.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, ROOT } from './paths.js';
import { PYTHON } from './system.js';

export const H200_RECORDS = join(FIXTURES, 'gpu-records', 'h200-2026-11-28');
export const REPLAY_PROGRAM = join(ROOT, 'test', 'bench', 'programs', 'cuda_replay.py');
/** The fake nvidia-smi (test/fixtures/bin) playing the H200's recorded telemetry. */
export const H200_SMI_ENV = {
  PATH: `${join(FIXTURES, 'bin')}:${process.env['PATH'] ?? ''}`,
  FAKE_NVIDIA_SMI_CARD: 'h200',
};

interface Rec {
  config: { batch_size: number };
  outcome: string;
  reason: string;
  wall_seconds: number;
  peak_device_bytes?: number | null;
  steps: { seconds: number }[];
  warmup?: { seconds: number }[];
}

export interface ReplaySpec {
  setup_seconds: number;
  process_seconds: number;
  limit_bytes: number;
  memory: [number, number][];
  step_seconds: [number, number][];
  warmup_seconds: [number, number][];
  oom_message: string;
  bend?: { at: number; factor: number };
}

export interface H200Replay {
  spec: ReplaySpec;
  /** The recorded boundary: the largest batch that ran and the smallest that failed above it. */
  max: number;
  smallestFail: number;
  /** Lightning's BatchSizeFinder on the same card and model (finders.jsonl). */
  lightningSeconds: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export function h200Replay(): H200Replay {
  const recs = readFileSync(join(H200_RECORDS, 'max-batch', 'trials.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Rec);
  const ok = recs.filter((r) => r.outcome === 'ok' && r.peak_device_bytes != null);
  const max = Math.max(...ok.map((r) => r.config.batch_size));
  const smallestFail = Math.min(
    ...recs.filter((r) => r.outcome === 'oom' && r.config.batch_size > max).map((r) => r.config.batch_size),
  );
  const memory = ok.map((r) => [r.config.batch_size, r.peak_device_bytes!] as [number, number]);
  const sorted = [...memory].sort((a, b) => a[0] - b[0]);
  const [[b0, m0], [b1, m1]] = [sorted.at(-2)!, sorted.at(-1)!];
  // The card's limit: between the max's memory and what the next multiple needs on the last segment.
  const atFail = m1 + ((m1 - m0) / (b1 - b0)) * (smallestFail - b1);
  const limit = Math.round((m1 + atFail) / 2);
  const stepsOf = (r: Rec) => r.steps.reduce((a, s) => a + s.seconds, 0);
  const warmOf = (r: Rec) => (r.warmup ?? []).reduce((a, s) => a + s.seconds, 0);
  const oom = recs.find((r) => r.outcome === 'oom' && r.reason.includes('CUDA out of memory'))!;
  const log = readFileSync(join(H200_RECORDS, 'log.txt'), 'utf8');
  const setup = Number(/proof_model\.py imported and set up once in ([\d.]+) s/.exec(log)?.[1]);
  const finders = readFileSync(join(H200_RECORDS, 'finders.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { finder?: string; seconds: number });
  return {
    spec: {
      setup_seconds: setup,
      // Everything of a probe but its steps: paid once per process (Lightning's 19 attempts in one
      // process took 39.4 s in all, so it is not paid per attempt). It includes the harness of then.
      process_seconds: median(ok.map((r) => r.wall_seconds - stepsOf(r) - warmOf(r))),
      limit_bytes: limit,
      memory,
      step_seconds: ok.map((r) => [r.config.batch_size, median(r.steps.map((s) => s.seconds))]),
      warmup_seconds: ok.map((r) => [r.config.batch_size, warmOf(r)]),
      oom_message: oom.reason.replace(/^oom event from the workload: /, ''),
    },
    max,
    smallestFail,
    lightningSeconds: finders.find((f) => f.finder === 'lightning')!.seconds,
  };
}

/**
 * The same card with memory that bends upward: at its own max the memory is `factor` above the line
 * of the recorded first two probes (a line that overestimates that max, as on the held-out transformer).
 */
export function bent(r: H200Replay, factor = 0.18): { spec: ReplaySpec; max: number } {
  const sorted = [...r.spec.memory].sort((a, b) => a[0] - b[0]);
  const [b0, m0] = sorted[0]!;
  const [b1, m1] = sorted[1]!;
  const slope = (m1 - m0) / (b1 - b0);
  const line = (b: number) => m0 + slope * (b - b0);
  // The batch where line x (1 + factor) meets the limit is the bent curve's max.
  const at = (r.spec.limit_bytes / (1 + factor) - (m0 - slope * b0)) / slope;
  return {
    spec: {
      ...r.spec,
      memory: [
        [b0, m0],
        [b1, m1],
        [2 * b1, line(2 * b1)],
      ],
      bend: { at, factor },
    },
    max: Math.floor(at),
  };
}

/** The kit's max-batch experiment (scripts/gpu-proof.sh, on the GPU) on the replay, with extra stage keys. */
export function replayExperiment(opts: { dir: string; spec: ReplaySpec; scale: number; stage?: string }): string {
  const replay = join(opts.dir, 'replay.json');
  writeFileSync(replay, JSON.stringify(opts.spec));
  const file = join(opts.dir, 'replay.yaml');
  writeFileSync(
    file,
    `name: h200-replay
seed: 1
workload:
  kind: command
  python: ${PYTHON}
  command: [${REPLAY_PROGRAM}]
  protocol: required
  warm_start: fork
  env: { CUDA_REPLAY: ${JSON.stringify(replay)}, CUDA_REPLAY_SCALE: "${opts.scale}" }
  params: { device: cuda }
limits: { timeout: 120s }
measure: { warmup_steps: 1, steps: 3 }
stages:
  - kind: max-batch
    multiple_of: 8
    start: 64
    ceiling: 1048576
    steps: 2
    confirm_steps: 1
    repeat_boundary: 0
    throughput_points: 0
    choose: max
${opts.stage ?? ''}`,
  );
  return file;
}

/** A median of the recorded walls of a run's trials (test/fixtures/gpu-records/<records>/<run>/trials.jsonl). */
function medianWall(run: string): number {
  const walls = readFileSync(join(H200_RECORDS, run, 'trials.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as Rec).wall_seconds);
  return median(walls);
}

/**
 * What the kit's steps are costed in (gpu-proof/plan.json), each from the H200 records: a fresh process's
 * imports, a process's start of CUDA, a step and a warm-up step at the max, the finders as recorded, and
 * the median trial of the recorded compares, loader sweep and bf16 claim.
 */
export function h200Quantities(): Record<string, number> {
  const r = h200Replay();
  const at = (points: [number, number][]) => points.find(([b]) => b === r.max)![1];
  const finders = readFileSync(join(H200_RECORDS, 'finders.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { finder?: string; seconds: number });
  return {
    import: r.spec.setup_seconds,
    process: r.spec.process_seconds,
    step_at_max: at(r.spec.step_seconds),
    warmup_at_max: at(r.spec.warmup_seconds),
    lightning: r.lightningSeconds,
    accelerate: finders.find((f) => f.finder === 'accelerate')!.seconds,
    fork_trial: medianWall('allocator'),
    loader_trial: medianWall('loader'),
    claim_trial_bf16: medianWall('claim-gpu-bf16'),
  };
}
