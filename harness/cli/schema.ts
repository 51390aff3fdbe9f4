// `tunebench schema`: print the experiment file's JSON Schema (for editors and CI checks).
import type { Command } from 'commander';
import { jsonSchema } from '../experiment/schema.js';
import { examples } from './common.js';

export function registerSchema(program: Command): void {
  program
    .command('schema')
    .description('print the JSON Schema of experiment files')
    .addHelpText('after', examples('tunebench schema > experiments/schema.json'))
    .action(() => {
      process.stdout.write(`${JSON.stringify(jsonSchema(), null, 2)}\n`);
    });
}
