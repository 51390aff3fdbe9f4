// `tunebench validate <experiment>`: check a file without running it.
import type { Command } from 'commander';
import { examples } from './common.js';
import { loadExperiment } from '../engine/load.js';

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('check an experiment file without running it')
    .argument('<experiment>', 'experiment file (YAML or JSON)')
    .option('--json', 'print the resolved experiment as JSON', false)
    .addHelpText(
      'after',
      examples('tunebench validate experiments/torch-cnn.yaml', 'tunebench validate --json experiments/default.yaml'),
    )
    .action((path: string, raw: { json?: boolean }) => {
      const { experiment, source } = loadExperiment(path);
      if (raw.json) process.stdout.write(`${JSON.stringify(experiment, null, 2)}\n`);
      else
        process.stdout.write(
          `${source}: valid (${experiment.stages.length} stage${experiment.stages.length === 1 ? '' : 's'}: ` +
            `${experiment.stages.map((s) => s.kind).join(', ')})\n`,
        );
    });
}
