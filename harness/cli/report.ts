// `tunebench report <run-dir>`: rebuild every report of a run from its run.json and journal.
import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import { JOURNAL_FILE } from '../store/journal.js';
import { rebuildFromJournal } from '../engine/rebuild.js';
import { copyRunFiles } from '../store/run-dir.js';
import { writeReports } from '../report/write.js';
import { readBisectFile, writeBisectReport } from '../engine/bisect-finish.js';
import { terminalLines } from './progress.js';
import { examples, printablePath, requireOutDir } from './common.js';
import { readRunDir } from '../experiment/run-file.js';
import { STAGE_KIND_MODULES } from '../engine/kinds/index.js';

export function registerReport(program: Command): void {
  program
    .command('report')
    .description('rebuild charts/, report.html and summary.md of a run directory from its run.json and trials.jsonl')
    .argument('<run-dir>', 'a run directory, e.g. reports/default/<run-id>')
    .option(
      '--out <dir>',
      'write the reports to this folder instead (with copies of the files they link to), ' +
        'e.g. when the run directory is read-only',
    )
    .addHelpText(
      'after',
      examples(
        'tunebench report reports/default/<run-id>',
        'tunebench report reports/default/<run-id> --out /tmp/report',
      ),
    )
    .action(async (dirArg: string, o: { out?: string }) => {
      const dir = resolve(dirArg);
      const read = readRunDir(dir);
      if (read.run.bisect) {
        // A bisection's reports come from its bisect.json, not from stages.
        const target = o.out === undefined ? dir : copyRunFiles(dir, requireOutDir('--out', resolve(o.out)));
        const warnings = await writeBisectReport(target, readBisectFile(dir), true);
        for (const w of warnings) process.stderr.write(terminalLines(`tunebench: warning: ${w}\n`));
        process.stdout.write(`bisect.md, report.html and the ratio chart written in ${printablePath(target)}\n`);
        return;
      }
      const { run, warning } = await rebuildFromJournal(read.run, read.records, join(dir, JOURNAL_FILE));
      for (const w of [...read.warnings, ...(warning ? [warning] : [])])
        process.stderr.write(terminalLines(`tunebench: warning: ${w}\n`));
      const target = o.out === undefined ? dir : copyRunFiles(dir, requireOutDir('--out', resolve(o.out)));
      const files = await writeReports(target, run, read.records, { kinds: STAGE_KIND_MODULES });
      process.stdout.write(
        `${files.length} files written in ${printablePath(target)}: ` +
          `report.html, summary.md and ${files.length - 2} chart files\n`,
      );
    });
}
