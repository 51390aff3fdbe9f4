// The interface every workload kind implements: how to start one trial of a configuration.
import type { Config, ParamValue, PlateauRule } from '../domain/index.js';

export interface MeasureSteps {
  warmupSteps: number;
  steps: number;
  /** Epochs the trial should span (TUNEBENCH_TRIAL_EPOCHS); unset: the workload's own. */
  epochs?: number;
  /**
   * Run until memory flattens: `steps` is then the bound, and the harness stops the trial at the
   * plateau (a max-batch confirmation); unset: the trial runs its steps.
   */
  plateau?: PlateauRule;
}

export interface TrialCommand {
  argv: string[];
  env: Record<string, string>;
  cwd?: string;
  /** True when the program speaks the events protocol and exiting without steps is an error. */
  eventsRequired: boolean;
  /** A program run before the trial, untimed, with the same environment and working directory. */
  prepare?: string[];
  /** Warm start: fork the trial from a server that runs this script once (Python adapter only). */
  warm?: WarmStartCommand;
  /** Ranks the trial runs as (workload.launcher: torchrun); absent: one process. */
  ranks?: number;
  /** What names the program that starts the ranks (e.g. "workload.launcher.python"), for messages. */
  launcherField?: string;
  /** Paths the harness removes after the trial (torchrun's log directory). */
  cleanup?: string[];
  /** A program run after the trial, untimed (`tunebench time --conclude`). */
  conclude?: string[];
  /** A non-zero exit is still a timed run (`tunebench time --ignore-failure`); its exit code is kept. */
  ignoreFailure?: boolean;
  /** Where the program's standard streams go; absent: no stdin, stdout and stderr read by the harness. */
  stdio?: TrialStdio;
}

/** Where a fresh process's standard streams go (`tunebench time --input/--output/--show-output`). */
export interface TrialStdio {
  /** A file (absolute path) the program reads as its standard input; absent: none. */
  stdin?: string;
  /**
   * null: /dev/null; pipe: read and discarded (the default); inherit: the terminal; `{ file }`: written
   * to that file (absolute path), rewritten at every run.
   */
  stdout?: 'null' | 'pipe' | 'inherit' | { file: string };
  /** pipe: read, its tail kept for a failure's record (the default); inherit: the terminal (no tail). */
  stderr?: 'pipe' | 'inherit';
}

/** The warm server a trial may fork from: trials with the same key share one server. */
export interface WarmStartCommand {
  key: string;
  server: { argv: string[]; env: Record<string, string>; cwd?: string };
}

/** How to run the user's own program with a config outside tunebench (no measurement variables). */
export interface TrainingCommand {
  /** The whole command: interpreter, script and expanded arguments. */
  argv: string[];
  /** The expanded arguments without the program part: what the user's script takes. */
  args: string[];
  cwd: string;
  /** The config's protocol variables, the workload's `env` and PYTHONPATH with the adapter. */
  env: Record<string, string>;
}

export interface Workload {
  readonly kind: string;
  /** One line for logs and reports, e.g. "onnx transformer(dim=64, ...)". */
  readonly description: string;
  /** Parameter values fixed by the experiment; a trial's config overrides them. */
  readonly fixedParams: Config;
  /** `argv` replaces the program and its arguments (templates included) where the workload allows it. */
  command(config: Config, measure: MeasureSteps, argv?: readonly string[]): TrialCommand;
  /** The Python interpreter the user's program runs under, when it is a Python program: its stack is fingerprinted. */
  readonly python?: string | undefined;
  /** Workloads that run the user's own program: that program with `config`; throws when a template has no value. */
  training?(config: Config): TrainingCommand;
}

/** Fixed parameters without the ones left unset. */
export function definedParams(params: Record<string, ParamValue | undefined> | undefined): Config {
  return Object.fromEntries(Object.entries(params ?? {}).filter((e): e is [string, ParamValue] => e[1] !== undefined));
}
