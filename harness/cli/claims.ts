// `tunebench claims <dir>`: run every claim experiment in a folder and print one verdict table.
import type { Command } from 'commander';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createProgress } from './progress.js';
import { runExperiment } from '../engine/run-experiment.js';
import { ConfigError, EXIT } from '../errors.js';
import { md, table } from '../report/markdown.js';
import { writeFileAtomic } from '../store/atomic.js';
import { makeDirs } from '../store/run-dir.js';
import { addCommonOptions, appendStepSummary, examples, progressMode, resolveCommon } from './common.js';
import { withStopSignals } from './signals.js';

interface Row {
  file: string;
  stage: string;
  claim: string;
  change: string;
  measured: string;
  verdict: string;
  reason: string;
}

export function registerClaims(program: Command): void {
  addCommonOptions(
    program
      .command('claims')
      .description(
        "run every experiment file in a folder (the seeds' claims: experiments/claims/) and print a verdict table",
      )
      .argument('<dir>', 'folder of experiment files with claim stages')
      .option('--max-pairs <n>', 'cap every claim at n interleaved pairs (a reduced budget, e.g. for CI)')
      .addHelpText(
        'after',
        examples('tunebench claims experiments/claims', 'tunebench claims experiments/claims --max-pairs 8 --json'),
      ),
  ).action(async (dirArg: string, raw: Record<string, unknown>) => {
    const o = resolveCommon(raw);
    const dir = resolve(dirArg);
    let files: string[];
    try {
      files = readdirSync(dir)
        .filter((f) => /\.(ya?ml|json)$/.test(f) && statSync(join(dir, f)).isFile())
        .sort();
    } catch (error) {
      throw new ConfigError(`${dir}: ${(error as Error).message}`, [], { cause: error });
    }
    if (files.length === 0) throw new ConfigError(`${dir} has no experiment files (.yaml, .yml or .json)`, []);
    const maxPairs = raw['maxPairs'] === undefined ? undefined : Number(raw['maxPairs']);
    if (maxPairs !== undefined && !(Number.isInteger(maxPairs) && maxPairs >= 1))
      throw new ConfigError(`--max-pairs: expected a positive integer, got ${JSON.stringify(raw['maxPairs'])}`, []);
    const rows: Row[] = [];
    let invalid = 0;
    for (const file of files) {
      const progress = createProgress(progressMode(o));
      try {
        const result = await withStopSignals((signal) =>
          runExperiment({
            experimentPath: join(dir, file),
            outDir: o.out,
            progress,
            signal,
            adjust: (e) => {
              if (maxPairs === undefined) return;
              for (const s of e.stages)
                if (s.kind === 'claim')
                  Object.assign(s, { max_pairs: maxPairs, min_pairs: Math.min(s.min_pairs, maxPairs) });
            },
          }),
        ).finally(() => progress.finish());
        for (const s of result.stages) {
          if (s.kind !== 'claim') continue;
          const c = s.result;
          const change = [...new Set([...Object.keys(c.baseline), ...Object.keys(c.candidate)])]
            .filter((k) => c.baseline[k] !== c.candidate[k])
            .map((k) => `${k} ${String(c.baseline[k] ?? '-')} → ${String(c.candidate[k] ?? '-')}`)
            .join(', ');
          const measured = c.speedup
            ? `${c.speedup.estimate.toFixed(2)}x [${c.speedup.low.toFixed(2)}, ${c.speedup.high.toFixed(2)}]`
            : '-';
          rows.push({
            file,
            stage: s.name,
            claim: c.claim,
            change,
            measured,
            verdict: c.verdict === 'skipped' ? `skipped: ${c.reason.split(':')[0]}` : c.verdict,
            reason: c.reason,
          });
        }
      } catch (error) {
        if (error instanceof ConfigError) {
          invalid += 1;
          rows.push({
            file,
            stage: '-',
            claim: '-',
            change: '-',
            measured: '-',
            verdict: 'invalid',
            reason: error.message.split('\n').slice(0, 2).join(' '),
          });
          continue;
        }
        throw error;
      }
    }
    const markdown = table(
      ['file', 'claim', 'change', 'measured speedup [95% CI]', 'verdict'],
      rows.map((r) => [md(r.file), md(r.claim), md(r.change), r.measured, md(r.verdict)]),
    );
    const outDir = resolve(o.out, 'claims');
    makeDirs(outDir);
    const verdicts =
      `# tunebench claims: ${md(dir)}\n\n${markdown}\n\n` +
      `${rows.map((r) => `- ${md(r.file)} ${md(r.stage)}: ${md(r.reason)}`).join('\n')}\n`;
    writeFileAtomic(join(outDir, 'verdicts.md'), verdicts);
    appendStepSummary(verdicts);
    if (o.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    else process.stdout.write(`${markdown}\n\nverdicts: ${join(outDir, 'verdicts.md')}\n`);
    if (invalid > 0) process.exitCode = EXIT.invalid;
  });
}
