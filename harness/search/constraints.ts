// Constraints that prune configs before they run: a CPU budget and a memory budget.
import { availableParallelism } from 'node:os';
import { evaluate, parseExpr, type Expr } from '../experiment/expr.js';
import { formatBytes } from '../experiment/units.js';
import type { Config } from '../trial/record.js';

export interface ConstraintSpec {
  cpus?: { uses: string | number; max: string | number };
  memory?: { uses: string | number; max: number };
}

export interface Pruned {
  config: Config;
  reason: string;
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
  private readonly cpuSource: string;
  private readonly memUses?: Expr;

  constructor(private readonly spec: ConstraintSpec, env: NodeJS.ProcessEnv = process.env) {
    const { cpus, source } = availableCpus(env);
    this.cpuSource = `${cpus} CPUs from ${source}`;
    if (spec.cpus) {
      this.cpuUses = parseExpr(String(spec.cpus.uses));
      this.cpuMax = typeof spec.cpus.max === 'number' ? spec.cpus.max : evaluate(parseExpr(spec.cpus.max), { cpus });
    }
    if (spec.memory) this.memUses = parseExpr(String(spec.memory.uses));
  }

  /** Why `config` must not run, or undefined when it may. */
  check(config: Config): string | undefined {
    if (this.cpuUses && this.cpuMax !== undefined) {
      const used = evaluate(this.cpuUses, config);
      if (used > this.cpuMax) return `CPU budget: ${this.spec.cpus!.uses} = ${used} > ${this.cpuMax} (${this.cpuSource})`;
    }
    if (this.memUses && this.spec.memory) {
      const used = evaluate(this.memUses, config);
      if (used > this.spec.memory.max) return `memory budget: ${this.spec.memory.uses} = ${formatBytes(used)} > ${formatBytes(this.spec.memory.max)}`;
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
