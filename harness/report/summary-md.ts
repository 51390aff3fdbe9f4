// summary.md: the run's results in Markdown, fit for a CI step summary or a pull-request comment.
import type { RunResult } from '../engine/result.js';
import { fmtPct, type CompareSummary } from '../engine/stages/compare.js';
import type { MaxBatchSummary } from '../engine/stages/max-batch.js';
import type { SweepSummary } from '../engine/stages/sweep.js';
import { formatBytes, formatSeconds } from '../experiment/units.js';
import type { Interval } from '../stats/bootstrap.js';
import type { TrialRecord } from '../trial/record.js';
import { code, md, table } from './markdown.js';

export function summaryMarkdown(run: RunResult, records: readonly TrialRecord[]): string {
  const out: string[] = [];
  out.push(`# tunebench: ${md(run.experiment)}`);
  out.push('');
  out.push(`Run ${code(run.run_id)} on ${md(run.environment)}: ${run.trials.total} trials (${Object.entries(run.trials.by_outcome).filter(([, n]) => n > 0).map(([o, n]) => `${n} ${o}`).join(', ')}) in ${formatSeconds(run.wall_seconds)}.`);
  for (const stage of run.stages) {
    out.push('', `## Stage ${md(stage.name)} (${stage.kind})`, '');
    if (stage.kind === 'max-batch') out.push(...maxBatchSection(stage.result as MaxBatchSummary, records.filter((r) => r.stage === stage.name)));
    if (stage.kind === 'sweep') out.push(...sweepSection(stage.result as SweepSummary));
    if (stage.kind === 'compare') out.push(...compareSection(stage.result as CompareSummary));
    for (const note of stage.notes) out.push(`- ${md(note)}`);
  }
  out.push('', '## Chosen config', '');
  out.push(table(['parameter', 'value', 'why'], Object.entries(run.chosen).map(([k, v]) => [code(k), code(String(v)), md(run.evidence[k]?.rule ?? 'fixed by the experiment')])));
  if (run.warnings.length > 0) out.push('', '## Warnings', '', ...run.warnings.map((w) => `- ${md(w)}`));
  out.push('');
  return out.join('\n');
}

function maxBatchSection(r: MaxBatchSummary, records: readonly TrialRecord[]): string[] {
  const b = (v: number | null | undefined) => (v === null || v === undefined ? '-' : String(v));
  const status: Record<MaxBatchSummary['status'], string> = {
    exact: 'exact',
    ceiling: `at the ceiling (true max >= ${b(r.max)})`,
    'none-fits': 'no batch fits under the cap',
    failed: 'the workload failed',
  };
  const rows: (string | number)[][] = [
    ['max (fits)', b(r.max), `${status[r.status]}; smallest failing batch ${b(r.smallestFail)}${r.confirmed ? ', confirmed by a longer run' : ''}`],
    ['recommended', b(r.recommended), `peak RSS at most ${Math.round((1 - r.headroom) * 100)}% of the max's`],
    ['fastest', b(r.fastest), r.peakSamplesPerSecond === null ? '-' : `within tolerance of the peak ${r.peakSamplesPerSecond.toFixed(1)} samples/s`],
  ];
  if (r.latencyBound) rows.push([`largest within ${r.latencyBound.quantile} <= ${(r.latencyBound.seconds * 1000).toFixed(1)} ms`, b(r.latencyBound.batch), r.latencyBound.firstViolating === null ? 'the max meets it' : `${r.latencyBound.firstViolating} breaks it`]);
  const lines = [table(['answer', r.param, 'note'], rows), '', `Chosen: **${b(r.chosen)}** (${md(r.choose_rule)}). Trials to the exact max: ${r.probesToMax}.`, ''];
  lines.push(
    table(
      ['#', 'role', r.param, 'outcome', 'samples/s', 'p95 step', 'peak RSS', 'peak capped', 'wall'],
      records.map((t) => [
        t.index,
        t.role,
        String(t.config[r.param] ?? '-'),
        t.outcome,
        t.samples_per_second === null ? '-' : t.samples_per_second.toFixed(1),
        t.step_seconds ? formatSeconds(t.step_seconds.p95) : '-',
        t.peak_rss_bytes === null ? '-' : formatBytes(t.peak_rss_bytes),
        t.peak_limited_bytes === null ? '-' : formatBytes(t.peak_limited_bytes),
        formatSeconds(t.wall_seconds),
      ]),
    ),
  );
  return lines;
}

function sweepSection(r: SweepSummary): string[] {
  const pct = (v: number | null) => (v === null ? '-' : `${(v * 100).toFixed(0)}%`);
  const rows = r.configs.map((c) => [
    c.key === r.chosen_key ? `**${md(c.key)}**` : md(c.key),
    c.status,
    c.trials.length,
    c.throughput ? `${c.throughput.estimate.toFixed(1)} [${c.throughput.low.toFixed(1)}, ${c.throughput.high.toFixed(1)}]` : '-',
    pct(c.stall_fraction),
    md(c.why ?? (r.tied.includes(c.key) && c.key !== r.chosen_key ? 'tied with the best' : '')),
  ]);
  return [
    `Strategy **${r.strategy}** over ${r.params.map(code).join(', ')}: ${r.trials} trials, ${r.trial_seconds.toFixed(1)} trial-seconds${r.budget_exhausted ? ' (budget exhausted)' : ''}.`,
    '',
    table(['config', 'status', 'trials', 'samples/s [95% CI]', 'stall', 'note'], rows),
    '',
  ];
}

function compareSection(r: CompareSummary): string[] {
  const ci = (i: Interval | null, f: (v: number) => string) => (i ? `${f(i.estimate)} [${f(i.low)}, ${f(i.high)}]` : '-');
  const rows = r.arms.map((a) => [
    a.value === r.chosen ? `**${md(String(a.value))}**` : md(String(a.value)),
    `${a.ok_trials}/${a.trials.length}`,
    ci(a.throughput, (v) => v.toFixed(1)),
    ci(a.throughput_ratio, fmtPct),
    a.verdict,
    ci(a.peak_memory, formatBytes),
    ci(a.memory_ratio, fmtPct),
    a.memory_verdict,
    a.empty_cache ? `${a.empty_cache.calls} (${formatSeconds(a.empty_cache.seconds)})` : '-',
  ]);
  return [
    `Arms of ${code(r.param)}, interleaved over ${r.rounds} round(s): ${r.trials} trials, ${r.trial_seconds.toFixed(1)} trial-seconds${r.budget_exhausted ? ' (budget exhausted)' : ''}. Baseline ${code(String(r.baseline))}; a change counts when its 95% CI lies outside +/-${(r.noise_band * 100).toFixed(1)}%.`,
    '',
    table(['arm', 'ok trials', 'median samples/s [95% CI]', 'vs baseline', 'verdict', 'median peak memory', 'vs baseline', 'memory', 'empty_cache calls'], rows),
    '',
  ];
}
