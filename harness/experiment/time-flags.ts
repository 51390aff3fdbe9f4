// The flags of `tunebench time` and `tunebench claim` as the requests one-liner.ts turns into experiments:
// hyperfine's multi-word flags joined for commander (-L name values, -P name min max), --shell resolved,
// the scans, streams and hooks checked. The CLI only registers the flags and prints.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { shellWord, splitCommand } from '../util/shell.js';
import { scanRange, type ClaimRequest, type Runner, type TimeRequest } from './one-liner.js';

/** How each command runs, as commander gives the flags of `time` and `claim`. */
export type RunnerFlags = {
  shell?: string;
  N?: boolean;
  warmup?: number;
  name?: string;
  prepare?: string;
  timeout?: string;
};

/** The flags of `tunebench time` that make its request (what is shown and exported is the CLI's). */
export type TimeRequestFlags = RunnerFlags & {
  parameterList?: string[];
  parameterScan?: string[];
  parameterStepSize?: string;
  runs?: number;
  minRuns?: number;
  maxRuns?: number;
  setup?: string;
  conclude?: string;
  cleanup?: string;
  commandName?: string[];
  reference?: string;
  ignoreFailure?: boolean;
  showOutput?: boolean;
  output?: string;
  input?: string;
};

/** The claim request's own fields come from commander under the same names. */
export type ClaimFlags = RunnerFlags &
  Pick<ClaimRequest, 'baseline' | 'candidate' | 'metric' | 'source' | 'minPairs' | 'maxPairs'>;

/** Flags that take several words (hyperfine's `-L name v1,v2` and `-P name min max`), with their count. */
const MULTI_WORD: Record<string, { words: number; example: string }> = {
  '-L': { words: 2, example: '-L workers 0,2,4' },
  '--parameter-list': { words: 2, example: '--parameter-list workers 0,2,4' },
  '-P': { words: 3, example: '-P threads 1 8' },
  '--parameter-scan': { words: 3, example: '--parameter-scan threads 1 8' },
};

/** Where the `time` or `claim` command is in argv (after global flags only), or -1. */
function subcommandAt(argv: readonly string[]): number {
  for (let i = 2; i < argv.length; i++) {
    if (argv[i] === 'time' || argv[i] === 'claim') return i;
    if (!argv[i]!.startsWith('-')) return -1;
  }
  return -1;
}

/**
 * Joins `-L name values` into `-L name=values` and `-P name min max` into `-P name=min,max`, which
 * commander can take as one option value, within `time`; and refuses the old boolean --shell (of `time`
 * and `claim`) where it is followed by another flag or nothing.
 */
export function joinScanFlags(argv: readonly string[]): string[] {
  const at = subcommandAt(argv);
  if (at < 0) return [...argv];
  const out = argv.slice(0, at + 1);
  for (let i = at + 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if ((a === '--shell' || a === '-S') && (argv[i + 1] === undefined || argv[i + 1]!.startsWith('-')))
      throw new ConfigError(
        `${a} takes the shell that runs the commands (hyperfine's -S): write ${a} sh 'cmd' (or ${a} bash)`,
      );
    const multi = argv[at] === 'time' ? MULTI_WORD[a] : undefined;
    if (multi && argv[i + 1] !== undefined && !argv[i + 1]!.includes('=')) {
      const words = argv.slice(i + 2, i + 1 + multi.words);
      if (words.length < multi.words - 1)
        throw new ConfigError(
          `${a} ${argv[i + 1]}: give the ${multi.words === 2 ? 'values' : 'range'} too, e.g. ${multi.example}`,
        );
      out.push(a, `${argv[i + 1]}=${words.join(',')}`);
      i += multi.words;
    } else out.push(a);
  }
  return out;
}

/** Shells --shell takes: a program whose name says it is one (hyperfine's -S also takes "bash --norc"). */
const SHELL_PROGRAM = /(^|\/)(\w*sh|nu|elvish|xonsh)$/;

/**
 * -S/--shell and -N as the shell's argv: none (the default, "none" or -N), /bin/sh ("default"), or the
 * shell given. A value that looks like a command (tunebench's old boolean --shell) is refused with the fix.
 */
export function resolveShell(value: string | undefined, none: boolean): string[] | undefined {
  if (value === undefined || value === 'none') return undefined;
  if (none) throw new ConfigError(`-N (no shell) and --shell ${value}: give one of them`);
  if (value === 'default') return ['/bin/sh'];
  let argv: string[] = [];
  try {
    argv = splitCommand(value);
  } catch {
    // a pipe or a variable: a command, not a shell
  }
  if (argv.length === 0 || !SHELL_PROGRAM.test(argv[0]!))
    throw new ConfigError(
      `--shell ${JSON.stringify(value)}: --shell takes the shell that runs the commands (hyperfine's -S), ` +
        `such as sh, bash or "bash --norc"; to run ${JSON.stringify(value)} through a shell, write ` +
        `--shell sh ${shellWord(value)}`,
    );
  return argv;
}

/** The runner fields of a request (shell, warm-ups, name, --prepare, --timeout) from the flags. */
export function runnerOf(raw: RunnerFlags, name: string): Runner {
  const shell = resolveShell(raw.shell, raw.N === true);
  return {
    ...(shell ? { shell } : {}),
    warmup: raw.warmup ?? 0,
    name: raw.name ?? name,
    ...(raw.prepare !== undefined ? { prepare: raw.prepare } : {}),
    ...(raw.timeout !== undefined ? { timeout: raw.timeout } : {}),
  };
}

/** -L and -P as the scans, in the order given (all -L first, then -P). */
function scansOf(raw: TimeRequestFlags): TimeRequest['scans'] {
  const split = (flag: string, v: string) => {
    const eq = v.indexOf('=');
    if (eq <= 0) throw new ConfigError(`${flag} ${v}: expected ${MULTI_WORD[flag]!.example}`);
    return { name: v.slice(0, eq), rest: v.slice(eq + 1) };
  };
  const lists = (raw.parameterList ?? []).map((v) => {
    const { name, rest } = split('-L', v);
    return { name, values: [rest] };
  });
  if (raw.parameterStepSize !== undefined && (raw.parameterScan ?? []).length === 0)
    throw new ConfigError(`-D ${raw.parameterStepSize}: the step of -P; give -P name min max too`);
  const ranges = (raw.parameterScan ?? []).map((v) => {
    const { name, rest } = split('-P', v);
    const [min, max, ...more] = rest.split(',');
    if (min === undefined || max === undefined || more.length > 0)
      throw new ConfigError(`-P ${name}: expected -P name min max, e.g. -P threads 1 8`);
    return { name, values: [scanRange(name, min, max, raw.parameterStepSize).join(',')] };
  });
  return [...lists, ...ranges];
}

/** --show-output and --output as the workload's stdout and stderr; --input as its stdin. */
function streamsOf(raw: TimeRequestFlags): Pick<TimeRequest, 'stdin' | 'stdout' | 'stderr'> {
  if (raw.showOutput && raw.output !== undefined && raw.output !== 'inherit')
    throw new ConfigError(`--show-output and --output ${raw.output}: --show-output is --output inherit; give one`);
  const where = raw.showOutput ? 'inherit' : (raw.output ?? 'null');
  if (where.trim() === '') throw new ConfigError('--output: give null, pipe, inherit or a file');
  const file = !['null', 'pipe', 'inherit'].includes(where);
  if (raw.input !== undefined && !existsSync(raw.input))
    throw new ConfigError(`--input ${raw.input}: no such file; give a file the commands read as their stdin`);
  return {
    stdout: file ? resolve(where) : where,
    ...(where === 'inherit' ? { stderr: 'inherit' as const } : {}),
    ...(raw.input !== undefined ? { stdin: resolve(raw.input) } : {}),
  };
}

/** The request of `tunebench time` from its arguments and flags. */
export function timeRequest(commands: string[], raw: TimeRequestFlags): TimeRequest {
  const req: TimeRequest = {
    ...runnerOf(raw, 'time'),
    commands,
    scans: scansOf(raw),
    ...(raw.runs !== undefined ? { runs: raw.runs } : {}),
    ...(raw.minRuns !== undefined ? { minRuns: raw.minRuns } : {}),
    ...(raw.maxRuns !== undefined ? { maxRuns: raw.maxRuns } : {}),
    ...(raw.commandName !== undefined ? { names: raw.commandName } : {}),
    ...(raw.reference !== undefined ? { reference: raw.reference } : {}),
    ...(raw.setup !== undefined ? { setup: raw.setup } : {}),
    ...(raw.conclude !== undefined ? { conclude: raw.conclude } : {}),
    ...(raw.cleanup !== undefined ? { cleanup: raw.cleanup } : {}),
    ...(raw.ignoreFailure ? { ignoreFailure: true } : {}),
    ...streamsOf(raw),
  };
  if (commands.length === 0)
    throw new ConfigError(
      "give at least one command to time, e.g. tunebench time 'sleep 0.1'" +
        (raw.shell !== undefined ? `; --shell takes the shell now: --shell sh '<cmd>'` : ''),
    );
  return req;
}

/** The request of `tunebench claim` from its claim and flags. */
export function claimRequest(claim: string, raw: ClaimFlags): ClaimRequest {
  return {
    ...runnerOf(raw, 'claim'),
    claim,
    baseline: raw.baseline,
    candidate: raw.candidate,
    ...(raw.metric !== undefined ? { metric: raw.metric } : {}),
    ...(raw.source !== undefined ? { source: raw.source } : {}),
    ...(raw.minPairs !== undefined ? { minPairs: raw.minPairs } : {}),
    ...(raw.maxPairs !== undefined ? { maxPairs: raw.maxPairs } : {}),
  };
}
