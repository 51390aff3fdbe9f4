// What was sampled while a trial ran, and the machine a run ran on: the shapes that trial records
// and run.json store.
import { z } from 'zod';

const num = z.number();
const numOrNull = z.number().nullable();

export const statSchema = z.object({ mean: num, p95: num, max: num });
export type Stat = z.infer<typeof statSchema>;

/** CPU that processes outside the trial's tree used on the trial's cores (telemetry/foreign-load.ts). */
export const foreignLoadSchema = z.object({
  /** Busy cores among the available ones minus the cores the trial's tree used, clamped at 0, per sample. */
  mean: num,
  p95: num,
  max: num,
  /** Cores the trial could run on: its CPU affinity (a SLURM allocation, a cpuset, taskset), else the machine's. */
  available_cores: num,
  /** Mean foreign load over the available cores, 0..1. */
  share: num,
  /** Mean busy cores among the available ones, the trial's included. */
  busy_cores: num,
});
export type ForeignLoad = z.infer<typeof foreignLoadSchema>;

export const gpuSeriesSchema = z.object({
  index: num,
  name: z.string(),
  t: z.array(num),
  utilization_pct: z.array(numOrNull),
  memory_used_bytes: z.array(numOrNull),
  power_watts: z.array(numOrNull),
  sm_clock_mhz: z.array(numOrNull),
  memory_total_bytes: numOrNull,
});
export type GpuSeries = z.infer<typeof gpuSeriesSchema>;

export const telemetrySchema = z.object({
  interval_ms: num,
  summary: z.object({
    /** CPU used by the process tree, in cores (1.5 = one and a half cores busy). */
    cpu_cores: statSchema.nullable(),
    /** Utilisation of the whole machine, 0..1, averaged over cores. */
    machine_cpu: statSchema.nullable(),
    rss_bytes: statSchema.nullable(),
    /** Processes in the tree: 1 + DataLoader workers for a PyTorch job, for example. */
    processes: statSchema.nullable(),
    /** Absent in records of versions before foreign-load sampling. */
    foreign_load: foreignLoadSchema.nullable().optional(),
    gpus: z.array(
      z.object({
        index: num,
        name: z.string(),
        utilization_pct: statSchema.nullable(),
        memory_used_bytes: statSchema.nullable(),
        power_watts: statSchema.nullable(),
      }),
    ),
  }),
  series: z.object({
    t: z.array(num),
    cpu_cores: z.array(num),
    per_core: z.array(z.array(num)),
    rss_bytes: z.array(num),
    processes: z.array(num),
    gpus: z.array(gpuSeriesSchema),
  }),
});
export type Telemetry = z.infer<typeof telemetrySchema>;

/** The environment stored with every run: host, CPU, memory, runtimes and the git commit. */
/** The workload's own stack: its Python interpreter, the versions of the packages that split a series, and torch's CUDA. */
export const workloadStackSchema = z.object({
  /** The interpreter as the experiment names it (workload.python, or the command's program). */
  interpreter: z.string(),
  python: z.string(),
  /** Installed versions (importlib.metadata) of torch and numpy; a package that is absent is left out. */
  packages: z.record(z.string(), z.string()),
  /** The CUDA version torch was built for; null for a CPU build or without torch. */
  cuda: z.string().nullable(),
});
export type WorkloadStack = z.infer<typeof workloadStackSchema>;

export const fingerprintSchema = z.object({
  host: z.string(),
  os: z.string(),
  kernel: z.string(),
  cpu: z.object({ model: z.string(), cores: num }),
  memory_bytes: num,
  gpu: z.object({ name: z.string(), driver: z.string(), memory_bytes: num, count: num }).nullable(),
  versions: z.record(z.string(), z.string()),
  git_commit: z.string().nullable(),
  /**
   * The top folder of the git checkout the commit was read from (`git rev-parse --show-toplevel`): the
   * repository a bisection runs in. Absent in runs recorded before it was stored.
   */
  git_root: z.string().nullable().optional(),
  /**
   * A Python workload's stack (null: the workload runs no Python, or its interpreter could not be read).
   * Absent in runs recorded before it was stored.
   */
  workload: workloadStackSchema.nullable().optional(),
});
export type Fingerprint = z.infer<typeof fingerprintSchema>;
