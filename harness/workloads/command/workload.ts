// The command workload: any program, started as an argument array with the protocol's environment.
import { delimiter, dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../trial/record.js';
import { protocolEnv } from '../protocol/env.js';
import type { MeasureSteps, TrialCommand, Workload } from '../workload.js';
import { expandArgs } from './template.js';

/** Where the Python adapter lives; the harness puts it on PYTHONPATH. */
export const PYTHON_ADAPTER_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'harness', 'workloads', 'python');

export interface CommandSpec {
  kind: 'command';
  command: string[];
  python?: string;
  cwd?: string;
  env?: Record<string, string>;
  params?: Record<string, unknown>;
  protocol?: 'optional' | 'required';
}

export class CommandWorkload implements Workload {
  readonly kind = 'command';
  readonly description: string;
  readonly fixedParams: Config;

  constructor(private readonly spec: CommandSpec, private readonly baseDir: string) {
    this.fixedParams = { ...(spec.params ?? {}) } as Config;
    this.description = `command ${spec.command.join(' ')}`;
  }

  command(config: Config, measure: MeasureSteps, override?: readonly string[]): TrialCommand {
    const values = { ...config, ...(this.spec.python ? { python: this.spec.python } : {}) };
    let argv = expandArgs(override ?? this.spec.command, values);
    // A script given directly runs under the named interpreter.
    if (this.spec.python && argv[0]!.endsWith('.py')) argv = [this.spec.python, ...argv];
    const cwd = this.spec.cwd ? (isAbsolute(this.spec.cwd) ? this.spec.cwd : resolve(this.baseDir, this.spec.cwd)) : this.baseDir;
    const pythonPath = [PYTHON_ADAPTER_DIR, this.spec.env?.['PYTHONPATH'] ?? process.env['PYTHONPATH']].filter(Boolean).join(delimiter);
    // Environment values take templates too: NCCL_P2P_LEVEL: "{nccl_p2p_level}".
    const names = Object.keys(this.spec.env ?? {});
    const extra = Object.fromEntries(expandArgs(Object.values(this.spec.env ?? {}), values).map((v, i) => [names[i]!, v]));
    return {
      argv,
      env: { ...extra, ...protocolEnv(config, measure), PYTHONPATH: pythonPath },
      cwd,
      eventsRequired: this.spec.protocol === 'required',
    };
  }
}
