// `tunebench baseline set|accept|show|clear`: pins the run that `tunebench history` compares the latest
// run with, and accepts flagged runs as new levels.
import type { Command } from 'commander';
import { existsSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { readRunEntry, type RunEntry } from '../history/index.js';
import { BASELINE_FILE, readAccepted, readBaseline, writeAccepted, writeBaseline } from '../history/trend.js';
import { examples } from './common.js';

export function registerBaseline(program: Command): void {
  const baseline = program
    .command('baseline')
    .description('pin the run that `tunebench history` compares the latest run with')
    .addHelpText(
      'after',
      examples('tunebench baseline set reports/default/<run-id>', 'tunebench baseline show reports/default'),
    );
  baseline
    .command('set')
    .description("pin a finished run as its experiment's baseline (<reports>/<experiment>/baseline.json)")
    .argument('<run-dir>', 'a finished run directory')
    .addHelpText('after', examples('tunebench baseline set reports/default/<run-id>'))
    .action(async (runArg: string) => {
      const { dir, entry } = await finishedRun(runArg, `pin ${runArg} as the baseline`);
      const path = writeBaseline(dir, {
        run_id: entry.run_id,
        set_at: new Date().toISOString(),
        env_key: entry.env_key,
      });
      process.stdout.write(
        `baseline of ${entry.experiment}: ${entry.run_id} (environment ${entry.env_key}: ${entry.env_label}); ` +
          `written to ${path}\n`,
      );
    });
  baseline
    .command('accept')
    .description(
      'accept a flagged run as the new level: the nightly gate takes it (and the nights after it) ' +
        'as the reference from now on (<reports>/<experiment>/accepted.json)',
    )
    .argument('<run-dir>', 'a finished run directory, usually the latest night that history flagged')
    .addHelpText('after', examples('tunebench baseline accept reports/default/<run-id>'))
    .action(async (runArg: string) => {
      const { dir, entry } = await finishedRun(runArg, `accept ${runArg}`);
      const expDir = dirname(dir);
      const accepted = readAccepted(expDir);
      if (accepted.some((a) => a.run_id === entry.run_id)) {
        process.stdout.write(`${entry.experiment}: ${entry.run_id} was already accepted\n`);
        return;
      }
      const path = writeAccepted(expDir, [...accepted, { run_id: entry.run_id, at: new Date().toISOString() }]);
      process.stdout.write(
        `${entry.experiment}: ${entry.run_id} accepted as a new level: ` +
          `the nightly gate compares later nights with it; written to ${path}\n`,
      );
    });
  baseline
    .command('show')
    .description('print the pinned baseline of an experiment folder')
    .argument('<experiment-dir>', 'e.g. reports/default')
    .addHelpText('after', examples('tunebench baseline show reports/default'))
    .action((dirArg: string) => {
      const pin = readBaseline(resolve(dirArg));
      const accepted = readAccepted(resolve(dirArg));
      process.stdout.write(
        pin
          ? `${JSON.stringify(pin)}\n`
          : `no pinned baseline in ${dirArg}: history compares the latest run with the run before it\n`,
      );
      if (accepted.length > 0)
        process.stdout.write(`accepted as new levels: ${accepted.map((a) => `${a.run_id} (${a.at})`).join(', ')}\n`);
    });
  baseline
    .command('clear')
    .description('remove the pinned baseline of an experiment folder')
    .argument('<experiment-dir>', 'e.g. reports/default')
    .addHelpText('after', examples('tunebench baseline clear reports/default'))
    .action((dirArg: string) => {
      const dir = resolve(dirArg);
      if (!existsSync(dir) || !statSync(dir).isDirectory())
        throw new ConfigError(
          `${dirArg} is not a folder: pass an experiment folder of a reports folder, e.g. reports/default`,
        );
      const path = join(dir, BASELINE_FILE);
      if (!existsSync(path))
        throw new ConfigError(
          `no pinned baseline in ${dirArg}: nothing to clear (${BASELINE_FILE} is not there); ` +
            'tunebench baseline show <experiment-dir> prints what is pinned',
        );
      rmSync(path, { force: true });
      process.stdout.write(`removed ${path}\n`);
    });
}

/** The finished run a baseline command names, or a ConfigError that says why it cannot do `toDo`. */
async function finishedRun(runArg: string, toDo: string): Promise<{ dir: string; entry: RunEntry }> {
  const dir = resolve(runArg);
  if (!existsSync(join(dir, 'run.json')))
    throw new ConfigError(`${runArg} is not a run directory (run.json is missing)`);
  const entry = await readRunEntry(dir);
  if ('why' in entry) throw new ConfigError(`cannot ${toDo}: ${entry.why}`);
  return { dir, entry };
}
