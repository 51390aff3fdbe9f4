// Samples a trial's process tree while it runs: CPU use of the tree and of each core, tree RSS,
// and NVIDIA GPUs through a looping nvidia-smi when one is on PATH.
import { spawn, type ChildProcess } from 'node:child_process';
import { quantile } from 'simple-statistics';
import { coreTimes, coreUtilisation, processCpuSeconds, type CoreTimes } from './cpu.js';
import type { GpuSeries, Stat, Telemetry } from '../domain/telemetry.js';
import { allowedCpus, foreignLoad } from './foreign-load.js';
import { findNvidiaSmi, GPU_QUERY, parseGpuSamples, type GpuSample } from './nvidia-smi.js';
import { processTree, rssBytes } from './proc-tree.js';

/** Sampling period: inside the 100-250 ms that keeps overhead low and short trials visible. */
export type { GpuSeries, Stat, Telemetry };

export const SAMPLE_MS = 200;

export function stat(values: readonly (number | null)[]): Stat | null {
  const v = values.filter((x): x is number => x !== null && Number.isFinite(x));
  if (v.length === 0) return null;
  return { mean: v.reduce((a, b) => a + b, 0) / v.length, p95: quantile(v, 0.95), max: Math.max(...v) };
}

export class TelemetrySampler {
  private readonly started = process.hrtime.bigint();
  private timer: NodeJS.Timeout | undefined;
  private lastCpu = new Map<number, number>();
  private lastCores: CoreTimes[] = [];
  private lastT = 0;
  private readonly series: Telemetry['series'] = {
    t: [],
    cpu_cores: [],
    per_core: [],
    rss_bytes: [],
    processes: [],
    gpus: [],
  };
  private gpuProcess: ChildProcess | undefined;
  /** The CPUs the trial's root process may run on (its affinity), as last read; null: all of them. */
  private allowed: Set<number> | null = null;
  peakRss = 0;

  constructor(
    private readonly root: number,
    private readonly intervalMs = SAMPLE_MS,
  ) {}

  /**
   * Starts sampling. Nothing heavy happens now: the first reading of the tree (a scan of /proc) and the
   * GPU sampler (a looping nvidia-smi) wait for the first interval, so a command that ends sooner (a
   * `tunebench time` of `true`) costs one read of /proc/stat and no process; the trial's processes
   * start at zero CPU, so the first interval's CPU use is counted from zero.
   */
  start(): void {
    this.lastCores = coreTimes();
    this.lastT = this.now();
    this.allowed = allowedCpus('self');
    let first = true;
    this.timer = setInterval(() => {
      // nvidia-smi is looked up on PATH and started at the first interval: a short trial never looks.
      const smi = first ? findNvidiaSmi() : undefined;
      first = false;
      if (smi) this.startGpu(smi);
      this.sample();
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): Telemetry {
    if (this.timer) clearInterval(this.timer);
    this.gpuProcess?.kill('SIGKILL');
    const s = this.series;
    const machine = s.per_core.map((cores) => (cores.length ? cores.reduce((a, b) => a + b, 0) / cores.length : 0));
    return {
      interval_ms: this.intervalMs,
      summary: {
        cpu_cores: stat(s.cpu_cores),
        machine_cpu: stat(machine),
        rss_bytes: stat(s.rss_bytes),
        processes: stat(s.processes),
        foreign_load: foreignLoad(s.cpu_cores, s.per_core, this.availableCores()),
        gpus: s.gpus.map((g) => ({
          index: g.index,
          name: g.name,
          utilization_pct: stat(g.utilization_pct),
          memory_used_bytes: stat(g.memory_used_bytes),
          power_watts: stat(g.power_watts),
        })),
      },
      series: s,
    };
  }

  /** Indices into per_core of the cores the trial may run on; undefined: all of them. */
  private availableCores(): number[] | undefined {
    const allowed = this.allowed;
    const own = allowed ? this.lastCores.flatMap((c, i) => (allowed.has(c.id) ? [i] : [])) : [];
    return own.length > 0 ? own : undefined;
  }

  private now(): number {
    return Number(process.hrtime.bigint() - this.started) / 1e9;
  }

  private sample(): void {
    const t = this.now();
    const pids = processTree(this.root);
    let used = 0;
    const next = new Map<number, number>();
    let rss = 0;
    for (const pid of pids) {
      const cpu = processCpuSeconds(pid);
      next.set(pid, cpu);
      used += cpu - (this.lastCpu.get(pid) ?? 0);
      rss += rssBytes(pid);
    }
    this.lastCpu = next;
    if (rss > this.peakRss) this.peakRss = rss;
    const cores = coreTimes();
    // Read each time: a wrapper (taskset, srun --cpu-bind) may set the affinity after the spawn.
    this.allowed = allowedCpus(this.root) ?? this.allowed;
    if (t > this.lastT) {
      this.series.t.push(Number(t.toFixed(3)));
      this.series.cpu_cores.push(Number((used / (t - this.lastT)).toFixed(3)));
      this.series.per_core.push(coreUtilisation(this.lastCores, cores).map((x) => Number(x.toFixed(3))));
      this.series.rss_bytes.push(rss);
      this.series.processes.push(pids.length);
    }
    this.lastCores = cores;
    this.lastT = t;
  }

  private startGpu(smi: string): void {
    const child = spawn(
      smi,
      [`--query-gpu=${GPU_QUERY}`, '--format=csv,noheader,nounits', `--loop-ms=${this.intervalMs}`],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    this.gpuProcess = child;
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      const t = Number(this.now().toFixed(3));
      for (const g of parseGpuSamples(lines.join('\n'))) this.addGpu(t, g);
    });
    child.on('error', () => undefined);
  }

  private addGpu(t: number, g: GpuSample): void {
    let s = this.series.gpus.find((x) => x.index === g.index);
    if (!s) {
      s = {
        index: g.index,
        name: g.name,
        t: [],
        utilization_pct: [],
        memory_used_bytes: [],
        power_watts: [],
        sm_clock_mhz: [],
        memory_total_bytes: g.memory_total_bytes,
      };
      this.series.gpus.push(s);
    }
    s.t.push(t);
    s.utilization_pct.push(g.utilization_pct);
    s.memory_used_bytes.push(g.memory_used_bytes);
    s.power_watts.push(g.power_watts);
    s.sm_clock_mhz.push(g.sm_clock_mhz);
  }
}
