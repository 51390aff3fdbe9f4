// The command workload: any program, started as an argument array with the protocol's environment.
import { delimiter, dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENV } from '../protocol/events.js';
import { configEnv, protocolEnv } from '../protocol/env.js';
import {
  definedParams,
  type MeasureSteps,
  type TrainingCommand,
  type TrialCommand,
  type TrialStdio,
  type WarmStartCommand,
  type Workload,
} from '../workload.js';
import { torchrunTraining, torchrunTrial, type LauncherSpec } from './launcher.js';
import { expandArg, expandArgs, programLength } from './template.js';
import type { Config, ParamValue } from '../../domain/index.js';
import { isPython } from '../../telemetry/workload-stack.js';

/** Where the Python adapter lives; the harness puts it on PYTHONPATH. */
export const PYTHON_ADAPTER_DIR = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  '..',
  'harness',
  'workloads',
  'python',
);

export interface CommandSpec {
  kind: 'command';
  command: string[];
  /** Run before every trial, untimed. */
  prepare?: string[];
  /** Run after every trial, untimed. */
  conclude?: string[];
  /** A non-zero exit is still a timed run. */
  ignore_failure?: boolean;
  /** Standard streams: a file for stdin; null, pipe, inherit or a file for stdout; pipe or inherit for stderr. */
  stdin?: string;
  stdout?: string;
  stderr?: 'pipe' | 'inherit';
  python?: string;
  cwd?: string;
  env?: Record<string, string>;
  params?: Record<string, ParamValue | undefined>;
  protocol?: 'optional' | 'required';
  /** fork: trials fork from a warm server that ran the script's imports and setup() once. */
  warm_start?: 'off' | 'fork';
  /** Each trial as nproc_per_node ranks under torch.distributed.run; never with warm_start: fork. */
  launcher?: LauncherSpec;
}

export class CommandWorkload implements Workload {
  readonly kind = 'command';
  readonly description: string;
  readonly fixedParams: Config;
  readonly python: string | undefined;

  constructor(
    private readonly spec: CommandSpec,
    private readonly baseDir: string,
  ) {
    this.fixedParams = definedParams(spec.params);
    // The interpreter the program runs under: workload.python (for "{python}" and a .py script), or a program
    // that is itself a Python (python3 train.py).
    const first = spec.command[0] ?? '';
    this.python = spec.python ?? (isPython(first) ? first : undefined);
    const ranks = spec.launcher ? ` (torchrun, ${spec.launcher.nproc_per_node} ranks)` : '';
    this.description = `command ${spec.command.join(' ')}${ranks}`;
  }

  command(config: Config, measure: MeasureSteps, override?: readonly string[]): TrialCommand {
    const { argv, cwd, extra } = this.expand(config, override ?? this.spec.command);
    const pythonPath = [PYTHON_ADAPTER_DIR, this.spec.env?.['PYTHONPATH'] ?? process.env['PYTHONPATH']]
      .filter(Boolean)
      .join(delimiter);
    const env = { ...extra, ...protocolEnv(config, measure), PYTHONPATH: pythonPath };
    const common = {
      env,
      cwd,
      eventsRequired: this.spec.protocol === 'required',
      ...(this.spec.prepare ? { prepare: this.expand(config, this.spec.prepare).argv } : {}),
      ...(this.spec.conclude ? { conclude: this.expand(config, this.spec.conclude).argv } : {}),
      ...(this.spec.ignore_failure ? { ignoreFailure: true } : {}),
      ...this.stdio(cwd),
    };
    const launcher = this.spec.launcher;
    if (launcher) {
      // Every rank reports, with its rank (the adapter reads TUNEBENCH_RANKS); no warm start.
      const ranks = launcher.nproc_per_node;
      const trial = torchrunTrial(launcher, this.spec.python, argv);
      return {
        ...common,
        argv: trial.argv,
        env: { ...env, [ENV.ranks]: String(ranks) },
        ranks,
        launcherField: trial.field,
        cleanup: [trial.logDir],
      };
    }
    return {
      ...common,
      argv,
      ...(this.spec.warm_start === 'fork'
        ? { warm: this.warm(config, argv, cwd, { ...extra, PYTHONPATH: pythonPath }) }
        : {}),
    };
  }

  /** The experiment's command with `config`, for training outside tunebench: no step counts, no events file. */
  training(config: Config): TrainingCommand {
    const { argv, cwd, extra } = this.expand(config, this.spec.command);
    const values = this.values(config);
    const args = expandArgs(this.spec.command.slice(programLength(this.spec.command)), values);
    const pythonPath = [PYTHON_ADAPTER_DIR, this.spec.env?.['PYTHONPATH']].filter(Boolean).join(delimiter);
    const launched = this.spec.launcher ? torchrunTraining(this.spec.launcher, this.spec.python, argv) : argv;
    return { argv: launched, args, cwd, env: { ...extra, ...configEnv(config), PYTHONPATH: pythonPath } };
  }

  /**
   * The server of a warm start: the interpreter and script (the first trial's arguments, which a
   * forked trial replaces in sys.argv), without the trial's protocol variables.
   */
  private warm(config: Config, argv: string[], cwd: string, env: Record<string, string>): WarmStartCommand {
    const program = this.expand(config, this.spec.command.slice(0, Math.max(1, programLength(this.spec.command)))).argv;
    return { key: JSON.stringify([program, cwd, env]), server: { argv, env, cwd } };
  }

  /** The trial's standard streams, with file paths resolved against its working directory. */
  private stdio(cwd: string): { stdio?: TrialStdio } {
    const { stdin, stdout, stderr } = this.spec;
    if (stdin === undefined && stdout === undefined && stderr === undefined) return {};
    const out =
      stdout === undefined
        ? undefined
        : stdout === 'null' || stdout === 'pipe' || stdout === 'inherit'
          ? stdout
          : { file: resolve(cwd, stdout) };
    return {
      stdio: {
        ...(stdin !== undefined ? { stdin: resolve(cwd, stdin) } : {}),
        ...(out !== undefined ? { stdout: out } : {}),
        ...(stderr !== undefined ? { stderr } : {}),
      },
    };
  }

  private values(config: Config): Record<string, unknown> {
    return { ...config, ...(this.spec.python ? { python: this.spec.python } : {}) };
  }

  private expand(
    config: Config,
    templates: readonly string[],
  ): { argv: string[]; cwd: string; extra: Record<string, string> } {
    const values = this.values(config);
    let argv = expandArgs(templates, values);
    // A script given directly runs under the named interpreter.
    if (this.spec.python && argv[0]?.endsWith('.py')) argv = [this.spec.python, ...argv];
    const cwd = this.spec.cwd
      ? isAbsolute(this.spec.cwd)
        ? this.spec.cwd
        : resolve(this.baseDir, this.spec.cwd)
      : this.baseDir;
    // Environment values take templates too: NCCL_P2P_LEVEL: "{nccl_p2p_level}"; one left out is not set.
    const extra: Record<string, string> = {};
    for (const [name, template] of Object.entries(this.spec.env ?? {})) {
      const v = expandArg(template, values);
      if (v !== undefined) extra[name] = v;
    }
    return { argv, cwd, extra };
  }
}
