// Experiments for the one-line commands `tunebench time` and `tunebench claim`: the command lines
// become a command workload and one stage, checked by the same schema as a file, so a one-liner
// runs, journals, resumes and reports exactly as an experiment file would.
import { ConfigError } from '../errors.js';
import { CommandLineError, splitCommand } from '../util/shell.js';
import { placeholders } from '../workloads/command/template.js';
import { parseExperimentText } from './load.js';
import type { Experiment } from './schema.js';

/** Rounds of `tunebench time` with one command when --runs is not given (hyperfine's default is 10). */
export const TIME_SINGLE_RUNS = 10;
/** The most rounds of an adaptive compare or scan when --runs is not given. */
export const TIME_MAX_ROUNDS = 20;
/** Rounds before the first decision: 6 is the fewest with a 95% distribution-free CI of the median. */
export const TIME_MIN_ROUNDS = 6;

export interface Runner {
  /** Run through /bin/sh -c (pipes, variables); default: split into arguments without a shell. */
  shell: boolean;
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
  /** -L name v1,v2,...: one command per value (several -L: every combination). */
  scans: { name: string; values: string[] }[];
  /** Fixed rounds; undefined: adaptive (compare, scan) or TIME_SINGLE_RUNS (one command). */
  runs?: number;
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

/** A command line as arguments: split without a shell, or handed to /bin/sh -c with --shell. */
export function commandArgv(line: string, shell: boolean, flag = 'command'): string[] {
  if (shell) {
    if (line.trim() === '') throw new ConfigError(`${flag}: the command is empty`);
    return ['/bin/sh', '-c', line];
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

function workload(argv: string[], r: Runner): Record<string, unknown> {
  return {
    kind: 'command',
    command: argv,
    ...(r.prepare !== undefined ? { prepare: commandArgv(r.prepare, r.shell, '--prepare') } : {}),
    protocol: 'optional',
  };
}

function limits(r: Runner): Record<string, unknown> {
  if (r.timeout === undefined) return {};
  return { timeout: /^\d+(\.\d+)?$/.test(r.timeout) ? Number(r.timeout) : r.timeout };
}

function checkRuns(runs: number | undefined, least: number): void {
  if (runs !== undefined && !(Number.isInteger(runs) && runs >= least))
    throw new ConfigError(
      `--runs: expected an integer of at least ${least} (fewer runs give no confidence interval), got ${runs}`,
    );
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

/** The experiment that `tunebench time` runs, and which of its three shapes it is. */
export function timeExperiment(req: TimeRequest): { experiment: Experiment; mode: TimeMode } {
  if (req.commands.length === 0) throw new ConfigError('give at least one command to time');
  const argvs = req.commands.map((c, i) => commandArgv(c, req.shell, `command ${i + 1}`));
  const common = { name: req.name, limits: limits(req) };
  let raw: Record<string, unknown>;
  let mode: TimeMode;
  if (req.scans.length > 0) {
    if (req.commands.length > 1)
      throw new ConfigError(
        `-L scans one command template, got ${req.commands.length} commands; ` +
          'write the values into one command as {name}, or drop -L to compare the commands',
      );
    checkRuns(req.runs, 3);
    // A Map: a plain object already "has" __proto__, constructor and toString.
    const params = new Map<string, (string | number)[]>();
    const used = new Set(argvs[0]!.flatMap((a) => placeholders(a).map((p) => p.name)));
    if (req.prepare) for (const p of placeholders(req.prepare)) used.add(p.name);
    for (const s of req.scans) {
      if (params.has(s.name)) throw new ConfigError(`-L ${s.name} is given twice`);
      if (!used.has(s.name))
        throw new ConfigError(
          `-L ${s.name}: the command does not use {${s.name}}, so every value would run the same command; ` +
            `write {${s.name}} where the value goes, e.g. 'python train.py --${s.name.replace(/_/g, '-')} {${s.name}}'`,
        );
      params.set(s.name, scanValues(s.name, s.values.join(',')));
    }
    mode = 'scan';
    raw = {
      ...common,
      workload: workload(argvs[0]!, req),
      stages: [
        {
          kind: 'sweep',
          name: 'scan',
          // Own keys even for reserved names, so that the schema names and refuses them.
          params: Object.fromEntries(params),
          strategy: 'race',
          min_rounds: req.runs ?? 3,
          repeats: req.runs ?? TIME_MAX_ROUNDS,
          warmup_trials: req.warmup,
        },
      ],
    };
  } else if (req.commands.length === 1) {
    checkRuns(req.runs, 1);
    mode = 'single';
    raw = {
      ...common,
      workload: workload(argvs[0]!, req),
      stages: [
        {
          kind: 'sweep',
          name: 'time',
          params: { [COMMAND_PARAM]: [req.commands[0]] },
          strategy: 'grid',
          repeats: req.runs ?? TIME_SINGLE_RUNS,
          warmup_trials: req.warmup,
        },
      ],
    };
  } else {
    checkRuns(req.runs, 3);
    mode = 'compare';
    const arms = labels(req.commands);
    raw = {
      ...common,
      workload: workload(argvs[0]!, req),
      stages: [
        {
          kind: 'compare',
          name: 'time',
          param: COMMAND_PARAM,
          arms,
          commands: Object.fromEntries(arms.map((a, i) => [a, argvs[i]!])),
          repeats: req.runs ?? TIME_MIN_ROUNDS,
          max_rounds: req.runs ?? TIME_MAX_ROUNDS,
          warmup_trials: req.warmup,
        },
      ],
    };
  }
  return { experiment: parse(raw, 'tunebench time'), mode };
}

/** The experiment that `tunebench claim` runs: one claim stage on two commands. */
export function claimExperiment(req: ClaimRequest): Experiment {
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
  return parse(raw, 'tunebench claim');
}

/**
 * Through the experiment schema and its checks, as a file would be; the problems are reworded for
 * the command line where a field maps to a flag.
 */
function parse(raw: Record<string, unknown>, what: string): Experiment {
  try {
    return parseExperimentText(JSON.stringify(raw), what, 'json');
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
