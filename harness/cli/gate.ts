// `tunebench gate <reports-dir> --experiment <name>`: the nightly gate, paired (history/gate.ts).
import type { Command } from 'commander';
import { ConfigError, EXIT } from '../errors.js';
import { runGate } from '../history/gate.js';
import { nightText } from '../history/nights.js';
import { NIGHT_DEFAULTS } from '../search/nightly-gate.js';
import { printedCommand } from '../util/shell.js';
import { examples, progressMode, resolveCommon } from './common.js';
import { createProgress, terminalLines } from './progress.js';
import { withStopSignals } from './signals.js';

interface GateFlags {
  experiment?: string;
  threshold: string;
  repo?: string;
  build?: string;
  maxRounds: string;
  failOnUndecided?: boolean;
  quiet?: boolean;
  json?: boolean;
}

export function registerGate(program: Command): void {
  program
    .command('gate')
    .description(
      "the nightly gate, paired: the newest run's commit against the reference night's, both run tonight in " +
        `interleaved rounds at the reference's chosen config until the sequential CI decides; exit ${EXIT.regression} ` +
        'on a slowdown beyond the threshold',
    )
    .argument('<reports-dir>', 'the folder runs write to (tunebench run --out)')
    .requiredOption('--experiment <name>', 'the experiment whose newest run is tonight')
    .option('--threshold <pct>', 'a slowdown beyond this percentage of the reference fails the night', '5')
    .option('--repo <dir>', "the repository of both commits (default: the checkout tonight's run was made in)")
    .option('--build <cmd>', "run with sh -c in each commit's worktree before its trials (e.g. 'npm ci')")
    .option('--max-rounds <n>', 'the most paired rounds a night runs', String(NIGHT_DEFAULTS.maxRounds))
    .option('--fail-on-undecided', `exit ${EXIT.regression} also when the rounds ran out before a decision`)
    .option('--quiet', 'no progress output')
    .option('--json', "print the night's record (as nights.json keeps it) on stdout")
    .addHelpText(
      'after',
      examples(
        'tunebench gate reports --experiment default',
        "tunebench gate reports --experiment my-model --threshold 10 --build 'pip install -e .'",
      ),
    )
    .action(async (reportsDir: string, raw: GateFlags) => {
      const threshold = Number(raw.threshold);
      if (!(threshold > 0 && threshold < 100))
        throw new ConfigError(
          `--threshold: expected a percentage above 0 and below 100, got ${JSON.stringify(raw.threshold)}`,
        );
      const maxRounds = Number(raw.maxRounds);
      if (!Number.isInteger(maxRounds) || maxRounds < 5)
        throw new ConfigError(`--max-rounds: expected an integer of at least 5, got ${JSON.stringify(raw.maxRounds)}`);
      const common = resolveCommon({ quiet: raw.quiet, json: raw.json });
      const progress = createProgress(progressMode(common));
      const outcome = await withStopSignals((signal) =>
        runGate({
          reportsDir,
          experiment: raw.experiment!,
          threshold: threshold / 100,
          maxRounds,
          ...(raw.repo !== undefined ? { repo: raw.repo } : {}),
          ...(raw.build !== undefined ? { build: raw.build } : {}),
          commandLine: printedCommand(['tunebench', ...process.argv.slice(2)]),
          progress,
          signal,
        }),
      ).finally(() => progress.finish());
      const n = outcome.night;
      if (raw.json) process.stdout.write(`${JSON.stringify(n, null, 2)}\n`);
      else
        process.stdout.write(
          terminalLines(`tunebench gate: ${outcome.again ? '(judged before) ' : ''}${nightText(n)}\n`),
        );
      if (n.bisect && !raw.json)
        process.stderr.write(
          terminalLines(
            `tunebench gate: the commit that made it slower: ${printedCommand(['tunebench', ...n.bisect])}\n`,
          ),
        );
      if (n.verdict === 'flagged' || (n.verdict === 'undecided' && raw.failOnUndecided))
        process.exitCode = EXIT.regression;
      else if (n.verdict === 'failed') process.exitCode = EXIT.harness;
    });
}
