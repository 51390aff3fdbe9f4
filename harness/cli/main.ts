#!/usr/bin/env -S node --max-semi-space-size=1
// A 1 MiB young generation: every trial is a fork of this process, and fork() copies the page tables of
// its resident memory (about 0.06 ms per MiB here); the default young generation grows to 16 MiB per
// semi-space, and a 1 MiB one cut the cost of a timed run of `true` from 4.6-5.1 ms to 4.0-4.2 ms
// (test/bench/RESULTS.md, bench:time). npm start and the bundle's launcher pass the same flag.
// The tunebench command: wires the subcommands and reports each error once with a documented exit code.
import { Command, CommanderError } from 'commander';
import { hardExit } from '../engine/hard-exit.js';
import { terminalLines } from './progress.js';
import { ConfigError, DetachedError, EXIT, exitCodeFor, StageFailedError, StoppedError } from '../errors.js';
import { registerBisect } from './bisect.js';
import { registerClaims } from './claims.js';
import { registerCompare } from './compare.js';
import { registerHistory } from './history.js';
import { registerGate } from './gate.js';
import { registerReport } from './report.js';
import { registerRun } from './run.js';
import { registerSchema } from './schema.js';
import { registerSlurm } from './slurm.js';
import { registerClaim, registerTime } from './time.js';
import { joinScanFlags } from '../experiment/time-flags.js';
import { registerValidate } from './validate.js';
import { versionLine } from './version.js';

export async function main(argv: string[] = process.argv): Promise<number> {
  const program = new Command('tunebench')
    .description('autotuning benchmark harness for ML jobs: max batch, sweeps, claims, with evidence')
    .version(versionLine(), '-V, --version', 'print the version and the commit it was built from')
    .exitOverride()
    .showHelpAfterError()
    .addHelpText(
      'after',
      '\nExit codes: 0 ok, 1 harness failure (also a stage that failed at the batch an earlier stage chose), 2 invalid input, ' +
        '3 regression (compare/history --fail-on-regression), ' +
        '4 chosen config changed (history --fail-on-config-change), 130 stopped by SIGINT, SIGTERM, SIGHUP or SIGQUIT.',
    );
  registerRun(program);
  registerTime(program);
  registerClaim(program);
  registerReport(program);
  registerCompare(program);
  registerClaims(program);
  registerHistory(program);
  registerGate(program);
  registerBisect(program);
  registerSlurm(program);
  registerValidate(program);
  registerSchema(program);
  try {
    await program.parseAsync(joinScanFlags(argv));
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; usage errors were already printed by commander.
      return error.exitCode === 0 ? EXIT.ok : EXIT.invalid;
    }
    const prefix =
      error instanceof ConfigError
        ? 'invalid input'
        : error instanceof StoppedError
          ? 'stopped by signal'
          : error instanceof DetachedError
            ? 'submitted'
            : error instanceof StageFailedError
              ? 'harness failure'
              : 'error';
    process.stderr.write(
      terminalLines(`tunebench: ${prefix}: ${error instanceof Error ? error.message : String(error)}\n`),
    );
    if (!(error instanceof ConfigError) && process.env['TUNEBENCH_DEBUG'] && error instanceof Error)
      process.stderr.write(`${error.stack}\n`);
    return exitCodeFor(error);
  }
}

// An error that escapes every handler (a bug, a callback that throws) must not leave a run locked at
// "running" with its trial's processes alive: they are killed, the run is marked failed, then exit 1.
const crash = (error: unknown): void => {
  const message = error instanceof Error ? error.message : String(error);
  hardExit('failed', `tunebench failed: ${message}`);
  process.stderr.write(
    `tunebench: error: ${terminalLines(message)}\n` +
      `${error instanceof Error && process.env['TUNEBENCH_DEBUG'] ? `${error.stack}\n` : ''}`,
  );
  process.exit(EXIT.harness);
};
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);

// Errors never reach here: main() reports each one and returns its exit code (crash() covers the rest).
void main().then((code) => {
  process.exitCode = code;
});
