// summary.md: the run's results in Markdown, fit for a CI step summary or a pull-request comment.
import type { ReportKinds } from './kinds.js';
import { warningText } from './warnings.js';
import { formatSeconds } from '../experiment/units.js';
import { figure } from './format.js';
import { code, md, table } from './markdown.js';
import { stageFailureSentence } from './stage-failure.js';
import { stageSection, type Block } from './tables.js';
import type { TrialRecord } from '../domain/index.js';
import type { RunResult } from '../experiment/run-file.js';

export function summaryMarkdown(run: RunResult, records: readonly TrialRecord[], kinds: ReportKinds): string {
  const out: string[] = [];
  out.push(`# tunebench: ${md(run.experiment)}`);
  out.push('');
  out.push(
    `Run ${code(run.run_id)} on ${md(run.environment)}: ${figure(run.trials.total)} trials (${Object.entries(
      run.trials.by_outcome,
    )
      .filter(([, n]) => n > 0)
      .map(([o, n]) => `${figure(n)} ${o}`)
      .join(', ')}) in ${figure(run.wall_seconds, formatSeconds)}.`,
  );
  if (run.stopped) {
    const s = run.stopped;
    out.push(
      '',
      '## Partial report',
      '',
      `This run did not finish: ${md(s.reason)}, during stage ${md(s.stage)} after ${figure(s.stage_trials)} ` +
        `of its trials (${figure(s.completed_trials)} completed trials in all, kept in the journal). ` +
        'Only the stages that finished are shown.',
      '',
      `Resume with: ${code(s.resume)}`,
    );
  }
  if (run.stage_failures?.length)
    out.push('', '## Failed', '', ...run.stage_failures.map((f) => `- ${md(stageFailureSentence(f))}`));
  for (const stage of run.stages) {
    out.push('', `## Stage ${md(stage.name)} (${md(stage.kind)})`, '');
    const section = stageSection(
      stage,
      records.filter((r) => r.stage === stage.name),
      kinds,
    );
    out.push([...section.answer, ...section.warnings, ...section.details].map(markdownBlock).join('\n\n'));
  }
  out.push('', '## Chosen config', '');
  out.push(
    table(
      ['parameter', 'value', 'why'],
      Object.entries(run.chosen).map(([k, v]) => [
        code(k),
        code(String(v)),
        md(run.evidence[k]?.rule ?? 'fixed by the experiment'),
      ]),
    ),
  );
  if (run.warnings.length > 0) out.push('', '## Warnings', '', ...run.warnings.map((w) => `- ${md(warningText(w))}`));
  out.push('');
  return out.join('\n');
}

function markdownBlock(block: Block): string {
  if (block.kind === 'text') return md(block.text);
  if (block.kind === 'list') return block.items.map((n) => `- ${md(n)}`).join('\n');
  if (block.kind === 'warning') return `> **Warning:** ${md(block.text)}`;
  const t = block.table;
  return table(
    t.headers,
    t.rows.map((row, i) => row.map((cell, j) => (j === 0 && t.highlight.includes(i) ? `**${md(cell)}**` : md(cell)))),
  );
}
