// The content of each stage's section as plain data (paragraphs, lists and tables of text cells),
// rendered by both summary.md and report.html, so that the two never disagree.
import { roleText } from '../domain/index.js';
import { fmtPct } from './format.js';
import { describeBand } from '../stats/claim.js';
import { formatBytes, formatSeconds } from '../experiment/units.js';
import { figure, interval as ci } from './format.js';
import { foreignLoadWarning } from './foreign-load.js';
import { tableBlock, text, type Block, type Table } from './blocks.js';
import {
  bandBlocks,
  firstHoldBlocks,
  survivedText,
  bucketBlocks,
  confirmationBlocks,
  loweredRows,
  predictionBlocks,
  recipeBlocks,
  maxFinalStatement,
} from './max-batch-blocks.js';
import { attemptBlocks, timelineBlocks } from './timeline-blocks.js';

export type { Block, Table };
import { growthPhrase, holds } from '../search/confirmation.js';
import { outcomeText, phaseSentences } from './phases.js';
import type {
  ClaimSummary,
  CompareSummary,
  Evidence,
  MaxBatchSummary,
  SweepSummary,
  TrialRecord,
} from '../domain/index.js';
import type { StageOutcome } from '../experiment/schema.js';
import { kindBlocks, type ReportKinds } from './kinds.js';
import { noteText } from './notes.js';

/** How a reference finder placed the boundary, as the answer's sentence says it. */
const STRATEGY_WORDS = {
  'power-bisect': "Lightning's BatchSizeFinder in mode binsearch, doubling from the start, then bisection",
  'shrink-on-oom': "Accelerate's find_executable_batch_size, x0.9 from the start after each OOM, then bisection",
} as const;

/** A stage as the report shows it: its outcome from run.json. */
export type StageView = StageOutcome;

/** A stage's section in the order a reader needs it; report.html puts the charts between `warnings` and `details`. */
export interface StageSection {
  /** What the stage decided and why: the chosen value with its evidence, the verdicts, the stage's answer table. */
  answer: Block[];
  /** What may have biased the stage's measurements (foreign load). */
  warnings: Block[];
  /** Every config, arm or trial with its figures. */
  details: Block[];
}

export function stageSection(stage: StageView, records: readonly TrialRecord[], kinds: ReportKinds): StageSection {
  const [answer, details] = kindBlocks(kinds, stage, records);
  const lead = chosenSentence(stage);
  // Runs of formats 1 and 2 kept the chosen value's rule and a claim's sentence among their notes, as text.
  const rules = Object.keys(stage.chosen ?? {}).flatMap((k) => stage.evidence?.[k]?.rule ?? []);
  const said = new Set([...rules, ...answer.flatMap((b) => (b.kind === 'text' ? [b.text] : []))]);
  const notes = (stage.notes ?? []).filter((n) => n.kind !== 'text' || !said.has(n.text)).map(noteText);
  const warning = foreignLoadWarning(stage.kind, records);
  return {
    answer: [
      ...(lead ? [text(lead)] : []),
      ...answer,
      ...phaseSentences(records, stage.kind === 'max-batch' ? stage.result.param : undefined).map(text),
      ...(notes.length > 0 ? [{ kind: 'list' as const, items: notes }] : []),
    ],
    warnings: warning ? [{ kind: 'warning', text: warning }] : [],
    details,
  };
}

/**
 * "Answer: p=v at <samples/s [95% CI]> (trials ...). Why: <rule>." for each distinct piece of
 * evidence; null when the stage chose nothing.
 */
function chosenSentence(stage: StageView): string | null {
  const chosen = Object.entries(stage.chosen ?? {});
  if (chosen.length === 0) return null;
  const groups = new Map<string, { params: string[]; e: Evidence | undefined }>();
  for (const [k, v] of chosen) {
    const e = stage.evidence?.[k];
    const id = JSON.stringify(e ?? null);
    const g = groups.get(id) ?? { params: [], e };
    g.params.push(`${k}=${String(v)}`);
    groups.set(id, g);
  }
  return [...groups.values()]
    .map(({ params, e }) => {
      if (!e) return `Answer: ${params.join(', ')}.`;
      const band = ci(e.samples_per_second, (x) => x.toFixed(1));
      const speed =
        band !== '-'
          ? ` at ${band} samples/s (95% CI`
          : figure(e.point, (x) => ` at ${x.toFixed(1)} samples/s (one trial, no CI`).replace(/^-$/, '');
      const trials =
        e.trials.length === 0
          ? ''
          : `trial${e.trials.length > 1 ? 's' : ''} ${e.trials.map((i) => figure(i)).join(', ')}`;
      const where = speed && trials ? `${speed}; ${trials})` : speed ? `${speed})` : trials ? ` (${trials})` : '';
      return `Answer: ${params.join(', ')}${where}. Why: ${e.rule.replace(/\.$/, '')}.`;
    })
    .join(' ');
}

/** A max-batch stage's blocks: its answers (max, recommended, fastest, latency), then its probes. */
export function maxBatchBlocks(r: MaxBatchSummary, records: readonly TrialRecord[]): [Block[], Block[]] {
  const b = (v: unknown) => figure(v);
  const status: Record<MaxBatchSummary['status'], string> = {
    exact: 'exact',
    ceiling: `at the ceiling (true max >= ${b(r.max)})`,
    'none-fits': 'no batch fits under the cap',
    failed: 'the workload failed',
  };
  // Runs written before answers carried what they survived have no `survived`.
  const survived = (answer: 'max' | 'recommended' | 'fastest') => survivedText(r.survived?.[answer]);
  // A max whose confirmation never showed memory flatten is never called one that holds.
  const g = r.memoryGrowth;
  const proof = g && !holds(g) ? `; not a max that holds: ${growthPhrase(g)}` : '';
  // A max found before later stages changed other settings is a max for those settings only, unless it ran with the written ones.
  const againstFinal = maxFinalStatement(r);
  const fits = r.max_final && r.max_final.outcome !== 'confirmed' ? 'max (fits as found)' : 'max (fits)';
  const rows: string[][] = [
    [
      fits,
      b(r.max),
      `${status[r.status]}; smallest failing batch ${b(r.smallestFail)}${proof}${againstFinal ? `; ${againstFinal}` : ''}`,
      survived('max'),
    ],
    [
      'recommended',
      b(r.recommended),
      `peak RSS at most ${figure(r.headroom, (h) => `${Math.round((1 - h) * 100)}%`)} of the max's`,
      survived('recommended'),
    ],
    [
      'fastest',
      b(r.fastest),
      figure(r.peakSamplesPerSecond, (v) => `within tolerance of the peak ${v.toFixed(1)} samples/s`),
      survived('fastest'),
    ],
  ];
  if (r.latencyBound)
    rows.push([
      `largest within ${r.latencyBound.quantile} <= ${figure(r.latencyBound.seconds, (v) => (v * 1000).toFixed(1))} ms`,
      b(r.latencyBound.batch),
      r.latencyBound.firstViolating === null ? 'the max meets it' : `${b(r.latencyBound.firstViolating)} breaks it`,
      '-',
    ]);
  const f = r.final_confirmation;
  rows.push(...loweredRows(r));
  if (f) rows.push([`final confirmation (${f.outcome})`, b(f.batch), f.statement, f.survived?.statement ?? '-']);
  return [
    [
      tableBlock(['answer', r.param, 'note', 'what it survived'], rows),
      text(
        `${r.chosen === null ? `Chosen: nothing (${r.choose_rule}). ` : ''}` +
          `Trials to the exact max: ${b(r.probesToMax)}` +
          `${r.strategy ? ` (strategy ${r.strategy}: ${STRATEGY_WORDS[r.strategy]})` : ''}.`,
      ),
      ...bandBlocks(r),
      ...firstHoldBlocks(r),
      ...ranksBlocks(records),
      ...bucketBlocks(r),
      ...recipeBlocks(r),
      ...confirmationBlocks(r),
      ...predictionBlocks(r),
      ...attemptBlocks(records, r.param),
    ],
    [
      tableBlock(
        [
          '#',
          'role',
          ...(r.buckets ? [r.buckets.param] : []),
          r.param,
          'outcome',
          'samples/s',
          'p95 step',
          'peak RSS',
          'peak capped',
          'wall',
        ],
        records.map((t) => [
          b(t.index),
          roleText(t.role),
          ...(r.buckets ? [String(t.config[r.buckets.param] ?? '-')] : []),
          String(t.config[r.param] ?? '-'),
          outcomeText(t),
          figure(t.samples_per_second, (v) => v.toFixed(1)),
          figure(t.step_seconds?.p95, formatSeconds),
          figure(t.peak_rss_bytes, formatBytes),
          figure(t.peak_limited_bytes, formatBytes),
          figure(t.wall_seconds, formatSeconds),
        ]),
      ),
      ...timelineBlocks(records, r.param),
    ],
  ];
}

/** Multi-rank trials (torchrun): how their figures combine, and which rank held the most memory. */
function ranksBlocks(records: readonly TrialRecord[]): Block[] {
  const multi = records.filter((t) => (t.ranks ?? 1) > 1);
  if (multi.length === 0) return [];
  const ranks = Math.max(...multi.map((t) => t.ranks!));
  const peaks = new Map<number, number>();
  for (const t of multi) if (t.peak_rank !== undefined) peaks.set(t.peak_rank, (peaks.get(t.peak_rank) ?? 0) + 1);
  const held = [...peaks]
    .sort(([a], [b]) => a - b)
    .map(([rank, n]) => `rank ${rank} in ${n}`)
    .join(', ');
  return [
    text(
      `Each trial ran ${ranks} ranks (workload.launcher): a batch fits when every rank survives, samples/s is summed ` +
        "over the ranks, steps are rank 0's, and memory is the largest rank's" +
        `${held ? ` (the largest was ${held} trial${multi.length === 1 ? '' : 's'})` : ''}. The cap applies to each rank.`,
    ),
  ];
}

/** A config is called tied only when it finished every trial: one that failed (an OOM at the chosen batch) never is. */
export function tiedWithBest(r: SweepSummary, c: SweepSummary['configs'][number]): boolean {
  return r.tied.includes(c.key) && c.key !== r.chosen_key && c.status !== 'failed';
}

/** A sweep's blocks: every config with its figures. */
export function sweepBlocks(r: SweepSummary): Block[] {
  const pct = (v: number | null) => figure(v, (x) => `${(x * 100).toFixed(0)}%`);
  const rows = r.configs.map((c) => [
    c.key,
    c.status,
    c.trials.length,
    ci(c.throughput, (v) => v.toFixed(1)),
    pct(c.stall_fraction),
    c.why ?? (tiedWithBest(r, c) ? 'tied with the best' : ''),
  ]);
  return [
    ...(r.inert ?? []).map((i) =>
      text(
        `${i.param} does nothing without a GPU (no CUDA device ran these trials): ` +
          'its values measure the same work, so any difference between them is noise.',
      ),
    ),
    text(
      `Strategy ${r.strategy} over ${r.params.join(', ')}: ${figure(r.trials)} trials, ` +
        `${figure(r.trial_seconds, (v) => v.toFixed(1))} trial-seconds` +
        `${r.budget_exhausted ? ' (budget exhausted)' : ''}.`,
    ),
    tableBlock(
      ['config', 'status', 'trials', 'samples/s [95% CI]', 'stall', 'note'],
      rows,
      r.configs.flatMap((c, i) => (c.key === r.chosen_key ? [i] : [])),
    ),
    ...(r.by_device && r.by_device.length > 0
      ? [
          text(
            'Configuration matrix per device class (SLURM): each class is ranked on its own trials' +
              `${r.by_device.length > 1 ? '; the stage-wide choice above pools them' : ''}.`,
          ),
          tableBlock(
            ['device', 'nodes', 'chosen config', 'samples/s [95% CI]', 'trials'],
            r.by_device.map((d) => [
              d.device,
              d.hosts.join(', '),
              d.chosen_key ?? '(none finished)',
              ci(d.throughput, (v) => v.toFixed(1)),
              figure(d.trials),
            ]),
            [],
          ),
        ]
      : []),
  ];
}

/** A compare's blocks: every arm with its verdicts. */
export function compareBlocks(r: CompareSummary): Block[] {
  // The workload's empty_cache count says something only where the policy is compared or some arm called it.
  const emptyCache = r.param === 'empty_cache' || r.arms.some((a) => (a.empty_cache?.calls ?? 0) > 0);
  const rows = r.arms.map((a) => [
    String(a.value),
    `${figure(a.ok_trials)}/${a.trials.length}`,
    ci(a.throughput, (v) => v.toFixed(1)),
    ci(a.throughput_ratio, fmtPct),
    a.decision === 'equivalent'
      ? `${a.verdict} (within the band, round ${figure(a.decided_at)})`
      : a.decision === 'faster' || a.decision === 'slower'
        ? `${a.verdict} (round ${figure(a.decided_at)})`
        : a.decision === 'undecided'
          ? `undecided (round ${figure(a.decided_at)})`
          : a.verdict,
    ci(a.peak_memory, formatBytes),
    ci(a.memory_ratio, fmtPct),
    a.memory_verdict,
    ...(emptyCache
      ? [a.empty_cache ? `${figure(a.empty_cache.calls)} (${figure(a.empty_cache.seconds, formatSeconds)})` : '-']
      : []),
  ]);
  return [
    text(
      `Arms of ${r.param}, interleaved over ${figure(r.rounds)} round(s): ${figure(r.trials)} trials, ` +
        `${figure(r.trial_seconds, (v) => v.toFixed(1))} trial-seconds` +
        `${r.budget_exhausted ? ' (budget exhausted)' : ''}. Baseline ${String(r.baseline)}; ` +
        'a change counts when its sequential 95% CI (paired rounds, valid at every look) ' +
        `lies outside +/-${figure(r.noise_band, (v) => (v * 100).toFixed(1))}%, no difference when it lies inside.`,
    ),
    tableBlock(
      [
        'arm',
        'ok trials',
        'samples/s [95% CI] (geometric mean)',
        'vs baseline',
        'verdict',
        'peak memory (geometric mean)',
        'vs baseline',
        'memory',
        ...(emptyCache ? ['empty_cache calls'] : []),
      ],
      rows,
      r.arms.flatMap((a, i) => (a.value === r.chosen ? [i] : [])),
    ),
  ];
}

/** A claim's blocks: the verdict and its figures. */
export function claimBlocks(r: ClaimSummary): Block[] {
  const band = describeBand(r.band.low, r.band.high, r.band.one_sided, (v) => figure(v, (x) => x.toPrecision(3)));
  return [
    text(r.sentence),
    tableBlock(
      ['claim', 'claimed effect', 'measured [sequential 95% CI]', 'p (paired t)', 'pairs', 'verdict'],
      [
        [
          r.claim,
          band,
          ci(r.speedup, (v) => `${v.toPrecision(3)}x`),
          figure(r.p, (v) => v.toPrecision(2)),
          figure(r.pairs),
          r.verdict,
        ],
      ],
    ),
  ];
}
