// Constraints that prune configs before they run: a CPU budget and a memory budget.
//
// The CPU budget counts the main process too: `uses + main <= max`, where `main` (the CPUs of the
// process that runs the model or the training loop) defaults to 1, and to 0 when `uses` names
// intra_op_threads, because then the main process's compute threads are already in `uses`.
import { availableParallelism } from 'node:os';
import { evaluate, names, parseExpr, type Expr } from '../experiment/expr.js';
import { formatBytes } from '../experiment/units.js';
import type { Config } from '../domain/index.js';

export interface ConstraintSpec {
  cpus?: { uses: string | number; max: string | number; main?: number };
  memory?: { uses: string | number; max: number };
}

export interface Pruned {
  config: Config;
  reason: string;
}

/** The parameter that, named in `uses`, already counts the main process's threads. */
export const MAIN_THREADS_PARAM = 'intra_op_threads';

/** The main process's CPUs for a CPU budget: as given, else 0 when `uses` names intra_op_threads, else 1. */
export function mainCpus(cpus: NonNullable<ConstraintSpec['cpus']>): number {
  if (cpus.main !== undefined) return cpus.main;
  return names(parseExpr(String(cpus.uses))).includes(MAIN_THREADS_PARAM) ? 0 : 1;
}

/** CPUs this job may use: SLURM's --cpus-per-task when set, else the cores the OS offers. */
export function availableCpus(env: NodeJS.ProcessEnv = process.env): { cpus: number; source: string } {
  const slurm = Number(env['SLURM_CPUS_PER_TASK']);
  if (Number.isInteger(slurm) && slurm > 0) return { cpus: slurm, source: 'SLURM_CPUS_PER_TASK' };
  return { cpus: availableParallelism(), source: 'available cores' };
}

export class Constraints {
  private readonly cpuUses?: Expr;
  private readonly cpuMax?: number;
  private readonly cpuMain: number = 0;
  private readonly cpuSource: string;
  private readonly memUses?: Expr;

  constructor(
    private readonly spec: ConstraintSpec,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const { cpus, source } = availableCpus(env);
    const max = spec.cpus === undefined ? '' : String(spec.cpus.max).trim();
    // Where the limit comes from: "SLURM_CPUS_PER_TASK", "cpus + 2, with 2 CPUs from available cores", "max".
    this.cpuSource =
      max === 'cpus' ? source : /\bcpus\b/.test(max) ? `${max}, with ${cpus} CPUs from ${source}` : 'max';
    if (spec.cpus) {
      this.cpuUses = parseExpr(String(spec.cpus.uses));
      this.cpuMax = typeof spec.cpus.max === 'number' ? spec.cpus.max : evaluate(parseExpr(spec.cpus.max), { cpus });
      this.cpuMain = mainCpus(spec.cpus);
    }
    if (spec.memory) this.memUses = parseExpr(String(spec.memory.uses));
  }

  /** Why `config` must not run, or undefined when it may. */
  check(config: Config): string | undefined {
    if (this.cpuUses && this.cpuMax !== undefined) {
      const used = evaluate(this.cpuUses, config);
      const total = used + this.cpuMain;
      if (total > this.cpuMax) {
        const uses = String(this.spec.cpus!.uses).trim();
        // "num_workers 2 + 1 main process = 3 > 2 CPUs"; an expression is shown with its value.
        const plain = /^[A-Za-z_][A-Za-z0-9_]*$/.test(uses)
          ? `${uses} ${used}`
          : uses === String(used)
            ? uses
            : undefined;
        const what =
          this.cpuMain === 0
            ? (plain ?? `${uses} = ${used}`)
            : `${plain ?? `(${uses} = ${used})`} + ${this.cpuMain} main process = ${total}`;
        return `CPU budget: ${what} > ${this.cpuMax} CPUs (${this.cpuSource})`;
      }
    }
    if (this.memUses && this.spec.memory) {
      const used = evaluate(this.memUses, config);
      if (used > this.spec.memory.max)
        return `memory budget: ${this.spec.memory.uses} = ${formatBytes(used)} > ${formatBytes(this.spec.memory.max)}`;
    }
    return undefined;
  }

  split(configs: readonly Config[]): { runnable: Config[]; pruned: Pruned[] } {
    const runnable: Config[] = [];
    const pruned: Pruned[] = [];
    for (const c of configs) {
      const reason = this.check(c);
      if (reason) pruned.push({ config: c, reason });
      else runnable.push(c);
    }
    return { runnable, pruned };
  }
}
