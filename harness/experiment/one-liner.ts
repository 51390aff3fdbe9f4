// Experiments for the one-line commands `tunebench time` and `tunebench claim`: the command lines
// become a command workload and one stage, checked by the same schema as a file, so a one-liner
// runs, journals, resumes and reports exactly as an experiment file would.
import { ConfigError } from '../errors.js';
import { CommandLineError, splitCommand } from '../util/shell.js';
import { expandArgs, placeholders } from '../workloads/command/template.js';
import { parseExperimentTextWith } from './load.js';
import type { ExperimentKinds } from './kinds.js';
import type { Experiment } from './schema.js';

/** Rounds of `tunebench time` with one command when --runs is not given (hyperfine's default is 10). */
export const TIME_SINGLE_RUNS = 10;
/** The most rounds of an adaptive compare or scan when --runs is not given. */
export const TIME_MAX_ROUNDS = 20;
/** Rounds before the first decision: 6 is the fewest with a 95% distribution-free CI of the median. */
export const TIME_MIN_ROUNDS = 6;

export interface Runner {
  /**
   * The shell each command runs under, as `<shell...> -c '<cmd>'` (pipes, variables), e.g. ["sh"] or
   * ["bash", "--norc"]; absent: split into arguments without a shell.
   */
  shell?: readonly string[];
  /** Untimed runs of each command before the first timed one. */
  warmup: number;
  /** A command run before every timed run (and warm-up), untimed. */
  prepare?: string;
  /** Before a run is killed: seconds, or a duration such as "90s" or "5m". */
  timeout?: string;
  /** The run's name: reports/<name>/<run-id>. */
  name: string;
}

export interface TimeRequest extends Runner {
  commands: string[];
  /** -L name v1,v2,... (and -P, as its generated list): one command per value (several: every combination). */
  scans: { name: string; values: string[] }[];
  /** Fixed rounds; undefined: adaptive (compare, scan) or TIME_SINGLE_RUNS (one command). */
  runs?: number;
  /** -m/-M: the fewest and the most rounds when --runs is not given. */
  minRuns?: number;
  maxRuns?: number;
  /** -n: the commands' labels, in order (fewer than the commands: the rest keep their command line). */
  names?: string[];
  /** --reference: the command every other is compared with (it becomes the first). */
  reference?: string;
  /** -C: run after every run, untimed. */
  conclude?: string;
  /** -s and -c: run once per command before its first run and after its last (outside the experiment). */
  setup?: string;
  cleanup?: string;
  /** -i: a non-zero exit is still a timed run. */
  ignoreFailure?: boolean;
  /** The workload's stdin (a file), stdout (null, pipe, inherit or a file) and stderr (pipe or inherit). */
  stdin?: string;
  stdout?: string;
  stderr?: 'pipe' | 'inherit';
}

export interface ClaimRequest extends Runner {
  claim: string;
  baseline: string;
  candidate: string;
  metric?: string;
  source?: string;
  minPairs?: number;
  maxPairs?: number;
}

export type TimeMode = 'single' | 'compare' | 'scan';

/** The parameter whose arms are the commands of `tunebench time` (one arm per command line). */
export const COMMAND_PARAM = 'command';

/** A command line as arguments: split without a shell, or handed to `<shell> -c` with --shell. */
export function commandArgv(line: string, shell: readonly string[] | undefined, flag = 'command'): string[] {
  if (shell) {
    if (line.trim() === '') throw new ConfigError(`${flag}: the command is empty`);
    return [...shell, '-c', line];
  }
  try {
    return splitCommand(line);
  } catch (error) {
    if (error instanceof CommandLineError) throw new ConfigError(`${flag}: ${error.message}`, [], { cause: error });
    throw error;
  }
}

/** `-L workers 0,2,4`: numbers stay numbers (as in an experiment file), anything else is text. */
export function scanValues(name: string, list: string): (string | number)[] {
  const values = list.split(',').map((v) => v.trim());
  if (values.some((v) => v === ''))
    throw new ConfigError(`-L ${name} ${JSON.stringify(list)}: an empty value; give values separated by commas`);
  // Only a number that prints back the same: "05" or "1.50" stay text, as typed.
  const out = values.map((v) => (v !== '' && String(Number(v)) === v ? Number(v) : v));
  const dup = out.find((v, i) => out.indexOf(v) !== i);
  if (dup !== undefined) throw new ConfigError(`-L ${name}: the value ${JSON.stringify(dup)} is given twice`);
  return out;
}

function workload(argv: string[], r: Runner & Partial<TimeRequest>): Record<string, unknown> {
  return {
    kind: 'command',
    command: argv,
    ...(r.prepare !== undefined ? { prepare: commandArgv(r.prepare, r.shell, '--prepare') } : {}),
    ...(r.conclude !== undefined ? { conclude: commandArgv(r.conclude, r.shell, '--conclude') } : {}),
    ...(r.ignoreFailure ? { ignore_failure: true } : {}),
    ...(r.stdin !== undefined ? { stdin: r.stdin } : {}),
    ...(r.stdout !== undefined ? { stdout: r.stdout } : {}),
    ...(r.stderr !== undefined ? { stderr: r.stderr } : {}),
    protocol: 'optional',
  };
}

function limits(r: Runner): Record<string, unknown> {
  if (r.timeout === undefined) return {};
  return { timeout: /^\d+(\.\d+)?$/.test(r.timeout) ? Number(r.timeout) : r.timeout };
}

function checkRuns(runs: number | undefined, least: number, flag = '--runs'): void {
  if (runs !== undefined && !(Number.isInteger(runs) && runs >= least))
    throw new ConfigError(
      `${flag}: expected an integer of at least ${least} (fewer runs give no confidence interval), got ${runs}`,
    );
}

/**
 * The fewest and the most rounds: --runs fixes both; -m and -M bound the adaptive rounds, whose
 * defaults are `least` and `most` (hyperfine's -m/-M for a command's runs).
 */
export function roundBounds(req: TimeRequest, least: number, most: number, floor: number): [number, number] {
  if (req.runs !== undefined) {
    if (req.minRuns !== undefined || req.maxRuns !== undefined)
      throw new ConfigError('--runs fixes the number of runs: drop -m/--min-runs and -M/--max-runs, or drop --runs');
    checkRuns(req.runs, floor);
    return [req.runs, req.runs];
  }
  checkRuns(req.minRuns, floor, '-m/--min-runs');
  checkRuns(req.maxRuns, floor, '-M/--max-runs');
  const min = req.minRuns ?? Math.min(least, req.maxRuns ?? least);
  const max = req.maxRuns ?? Math.max(most, min);
  if (min > max) throw new ConfigError(`-m/--min-runs ${min} is more than -M/--max-runs ${max}: give -m <= -M`);
  return [min, max];
}

/**
 * `-P name min max [-D step]` as the list of its values: integers from min to max by 1, or by the step
 * (which may be a decimal, as the bounds then may). Computed in integers of the finest decimal given,
 * so 0.3 to 0.7 by 0.2 is 0.3, 0.5, 0.7 exactly.
 */
export function scanRange(name: string, min: string, max: string, step?: string): number[] {
  const flag = `-P ${name} ${min} ${max}${step !== undefined ? ` -D ${step}` : ''}`;
  const nums = [min, max, step ?? '1'].map(Number);
  if (nums.some((n, i) => !Number.isFinite(n) || [min, max, step ?? '1'][i]!.trim() === ''))
    throw new ConfigError(`${flag}: expected numbers, e.g. -P threads 1 8 or -P delay 0.3 0.7 -D 0.2`);
  if (step === undefined && !(Number.isInteger(nums[0]) && Number.isInteger(nums[1])))
    throw new ConfigError(`${flag}: give -D with a step for decimal bounds, e.g. -D 0.1 (without it the step is 1)`);
  const decimals = Math.max(...[min, max, step ?? '1'].map((v) => (v.split('.')[1] ?? '').replace(/\D.*/, '').length));
  const scale = 10 ** decimals;
  const [lo, hi, by] = nums.map((n) => Math.round(n * scale)) as [number, number, number];
  if (by <= 0) throw new ConfigError(`${flag}: the step must be more than 0`);
  if (hi < lo) throw new ConfigError(`${flag}: ${max} is less than ${min}; give the smaller bound first`);
  const count = Math.floor((hi - lo) / by) + 1;
  if (count > 1000) throw new ConfigError(`${flag}: ${count} values; a scan takes at most 1000 (a larger step)`);
  return Array.from({ length: count }, (_, k) => (lo + k * by) / scale);
}

/** Labels of the commands, each unique: the same command twice (an A/A check) gets " #2". */
function labels(commands: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return commands.map((c) => {
    const n = (seen.get(c) ?? 0) + 1;
    seen.set(c, n);
    return n === 1 ? c : `${c} #${n}`;
  });
}

/** The commands timed, --reference first, and their labels (-n names, else the command lines). */
function timedCommands(req: TimeRequest): { commands: string[]; labels: string[] } {
  const names = req.names ?? [];
  if (names.length > req.commands.length)
    throw new ConfigError(
      `-n/--command-name is given ${names.length} times for ${req.commands.length} command(s): ` +
        'give one name per command, in order',
    );
  const own = req.commands.map((c, i) => names[i] ?? c);
  if (req.reference === undefined) return { commands: req.commands, labels: labels(own) };
  return { commands: [req.reference, ...req.commands], labels: labels([req.reference, ...own]) };
}

/** The placeholders a scan may fill: the command's, and those of --prepare, --conclude and --setup/--cleanup. */
function usedNames(req: TimeRequest, argv: readonly string[]): Set<string> {
  const used = new Set(argv.flatMap((a) => placeholders(a).map((p) => p.name)));
  for (const line of [req.prepare, req.conclude, req.setup, req.cleanup])
    if (line) for (const p of placeholders(line)) used.add(p.name);
  return used;
}

/** The scanned parameters and their values, in the order given; refuses a name the command does not use. */
function scanParams(req: TimeRequest, argv: readonly string[]): Map<string, (string | number)[]> {
  if (req.commands.length > 1)
    throw new ConfigError(
      `-L scans one command template, got ${req.commands.length} commands; ` +
        'write the values into one command as {name}, or drop -L to compare the commands',
    );
  if (req.reference !== undefined)
    throw new ConfigError(
      '--reference with -L/-P: a scan compares every value with the best one; ' +
        'drop --reference, or give the values as separate commands to compare them with the reference',
    );
  // A Map: a plain object already "has" __proto__, constructor and toString.
  const params = new Map<string, (string | number)[]>();
  const used = usedNames(req, argv);
  for (const s of req.scans) {
    if (params.has(s.name)) throw new ConfigError(`-L ${s.name} is given twice`);
    if (!used.has(s.name))
      throw new ConfigError(
        `-L ${s.name}: the command does not use {${s.name}}, so every value would run the same command; ` +
          `write {${s.name}} where the value goes, e.g. 'python train.py --${s.name.replace(/_/g, '-')} {${s.name}}'`,
      );
    params.set(s.name, scanValues(s.name, s.values.join(',')));
  }
  return params;
}

/** The stage of each shape: a race over scanned values, a grid of one command, a compare of several. */
function timeStage(req: TimeRequest, argvs: string[][]): { stage: Record<string, unknown>; mode: TimeMode } {
  const { commands, labels: arms } = timedCommands(req);
  if (req.scans.length > 0) {
    const params = scanParams(req, argvs[0]!);
    const [min, max] = roundBounds(req, 3, TIME_MAX_ROUNDS, 3);
    // Own keys even for reserved names, so that the schema names and refuses them.
    const stage = { kind: 'sweep', name: 'scan', params: Object.fromEntries(params), strategy: 'race' };
    return { mode: 'scan', stage: { ...stage, min_rounds: min, repeats: max, warmup_trials: req.warmup } };
  }
  if (commands.length === 1) {
    const [min, max] = roundBounds(req, TIME_SINGLE_RUNS, TIME_SINGLE_RUNS, 1);
    const runs = Math.min(Math.max(TIME_SINGLE_RUNS, min), max); // hyperfine's 10, within -m and -M
    return {
      mode: 'single',
      stage: { kind: 'sweep', name: 'time', params: { [COMMAND_PARAM]: [arms[0]] }, strategy: 'grid', repeats: runs },
    };
  }
  const [min, max] = roundBounds(req, TIME_MIN_ROUNDS, TIME_MAX_ROUNDS, 3);
  const all = req.reference !== undefined ? [commandArgv(req.reference, req.shell, '--reference'), ...argvs] : argvs;
  return {
    mode: 'compare',
    stage: {
      kind: 'compare',
      name: 'time',
      param: COMMAND_PARAM,
      arms,
      commands: Object.fromEntries(arms.map((a, i) => [a, all[i]!])),
      repeats: min,
      max_rounds: max,
    },
  };
}

/** The experiment that `tunebench time` runs (checked with `kinds`), and which of its three shapes it is. */
export function timeExperimentWith(
  req: TimeRequest,
  kinds: ExperimentKinds,
): { experiment: Experiment; mode: TimeMode } {
  if (req.commands.length === 0) throw new ConfigError('give at least one command to time');
  const argvs = req.commands.map((c, i) => commandArgv(c, req.shell, `command ${i + 1}`));
  const { stage, mode } = timeStage(req, argvs);
  const first = mode === 'compare' && req.reference !== undefined ? commandArgv(req.reference, req.shell) : argvs[0]!;
  const raw = {
    name: req.name,
    limits: limits(req),
    workload: workload(first, req),
    stages: [{ ...stage, warmup_trials: req.warmup }],
  };
  return { experiment: parse(raw, 'tunebench time', kinds), mode };
}

/** Every combination of the scanned values, in the order given (the first parameter varies slowest). */
function combinations(params: Map<string, (string | number)[]>): Record<string, string | number>[] {
  let out: Record<string, string | number>[] = [{}];
  for (const [name, values] of params) out = out.flatMap((c) => values.map((v) => ({ ...c, [name]: v })));
  return out;
}

/** A scan's configs in the order given: every combination of the values, the first parameter slowest. */
export function scanConfigs(req: TimeRequest): Record<string, string | number>[] {
  return combinations(scanParams(req, commandArgv(req.commands[0]!, req.shell)));
}

/**
 * --setup and --cleanup as programs to run once per command (each scanned value filled in): hyperfine
 * runs them around each command's runs; here the rounds interleave the commands, so every setup runs
 * before the first round and every cleanup after the last.
 */
export function onceCommands(req: TimeRequest): { setup: string[][]; cleanup: string[][] } {
  const configs = req.scans.length > 0 ? scanConfigs(req) : timedCommands(req).commands.map(() => ({}));
  const each = (line: string | undefined, flag: string) =>
    line === undefined ? [] : configs.map((c) => expandArgs(commandArgv(line, req.shell, flag), c));
  return { setup: each(req.setup, '--setup'), cleanup: each(req.cleanup, '--cleanup') };
}

/** The experiment that `tunebench claim` runs (checked with `kinds`): one claim stage on two commands. */
export function claimExperimentWith(req: ClaimRequest, kinds: ExperimentKinds): Experiment {
  const baseline = commandArgv(req.baseline, req.shell, '--baseline');
  const candidate = commandArgv(req.candidate, req.shell, '--candidate');
  if (JSON.stringify(baseline) === JSON.stringify(candidate))
    throw new ConfigError('--baseline and --candidate are the same command: a claim compares two different commands');
  const raw = {
    name: req.name,
    limits: limits(req),
    workload: workload(baseline, req),
    stages: [
      {
        kind: 'claim',
        name: 'claim',
        claim: req.claim,
        ...(req.source !== undefined ? { source: req.source } : {}),
        ...(req.metric !== undefined ? { metric: req.metric } : {}),
        baseline_command: baseline,
        candidate_command: candidate,
        ...(req.minPairs !== undefined ? { min_pairs: req.minPairs } : {}),
        ...(req.maxPairs !== undefined ? { max_pairs: req.maxPairs } : {}),
        warmup_trials: req.warmup,
      },
    ],
  };
  return parse(raw, 'tunebench claim', kinds);
}

/**
 * Through the experiment schema and its checks, as a file would be; the problems are reworded for
 * the command line where a field maps to a flag.
 */
function parse(raw: Record<string, unknown>, what: string, kinds: ExperimentKinds): Experiment {
  try {
    return parseExperimentTextWith(JSON.stringify(raw), what, kinds, 'json');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const flags: [RegExp, string][] = [
      [/stages\[0\]\.claim/g, 'the claim'],
      [/stages\[0\]\.metric/g, '--metric'],
      [/stages\[0\]\.min_pairs/g, '--min-pairs'],
      [/stages\[0\]\.max_pairs/g, '--max-pairs'],
      [/stages\[0\]\.warmup_trials/g, '--warmup'],
      [/limits\.timeout/g, '--timeout'],
    ];
    let message = error.message.replace(`${what}: invalid experiment`, `${what}: invalid arguments`);
    for (const [re, flag] of flags) message = message.replace(re, flag);
    throw new ConfigError(message, error.issues, { cause: error });
  }
}

/** A command line or -n name with a scanned row's values in place of its {name} placeholders. */
export function fillValues(template: string, config: Readonly<Record<string, unknown>>): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) =>
    Object.hasOwn(config, name) ? String(config[name]) : whole,
  );
}
