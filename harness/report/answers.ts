// Each stage's answer in one line: what the terminal prints when the stage ends and again in the run's
// last lines, and what `--json` carries beside the result. A claim's line is its verdict sentence, as
// summary.md prints it; a compare's names each arm's verdict; a max-batch's the max and the batch written;
// a sweep's the config it chose. The typed `verdict` is the word a script reads.
import type { ClaimSummary, CompareSummary, MaxBatchSummary, SweepSummary } from '../domain/index.js';
import type { StageOutcome } from '../experiment/schema.js';
import type { Frozen } from '../util/frozen.js';
import { growthPhrase, holds } from '../search/confirmation.js';
import { figure, interval, pctInterval } from './format.js';

/** A stage's answer as its kind words it: its verdict word(s) and the line a person reads. */
export interface KindAnswer {
  /**
   * claim: confirmed | falls short | exceeds | inconclusive | skipped; compare: each arm's decision
   * ("work=0.5 faster"); max-batch: its status (exact | ceiling | none-fits | failed); sweep: the chosen key or "none".
   */
  verdict: string;
  line: string;
}

/** A stage's answer, named: what `--json` lists as `answers`. */
export interface StageAnswer extends KindAnswer {
  stage: string;
  kind: StageOutcome['kind'];
}

/** A claim's answer: its verdict sentence, the words summary.md prints. */
export function claimAnswer(r: Frozen<ClaimSummary>): KindAnswer {
  return { verdict: r.verdict, line: r.sentence };
}

/** A max-batch stage's answer: its status, the max and the batch written. */
export function maxBatchAnswer(r: Frozen<MaxBatchSummary>): KindAnswer {
  return { verdict: r.status, line: maxBatchLine(r) };
}

/** What a compare arm was decided: the words of the arm-verdict note and summary.md's table. */
function armDecision(a: Frozen<CompareSummary['arms'][number]>, band: number): string {
  switch (a.decision) {
    case 'equivalent':
      return `no difference (within the +/-${(band * 100).toFixed(1)}% band)`;
    case 'undecided':
      return 'undecided';
    case 'faster':
    case 'slower':
      return a.decision;
    default:
      // Runs before sequential compares kept the verdict only; a failed arm says so.
      return a.verdict === 'failed' ? 'not compared (no successful trial)' : a.verdict;
  }
}

/** A compare's answer: each arm's verdict against the baseline, and the arm kept. */
export function compareAnswer(r: Frozen<CompareSummary>): KindAnswer {
  const arms = r.arms.filter((a) => !a.baseline);
  const label = (a: Frozen<CompareSummary['arms'][number]>) => `${r.param}=${String(a.value)}`;
  const verdict = arms.map((a) => `${label(a)} ${armDecision(a, r.noise_band)}`).join(', ');
  const parts = arms.map((a) => {
    const ratio = a.throughput_ratio ? `, throughput ${pctInterval(a.throughput_ratio)}` : '';
    return `${label(a)} vs ${String(r.baseline)}: ${armDecision(a, r.noise_band)}${ratio}`;
  });
  const kept = `kept ${r.param}=${String(r.chosen)}`;
  return { verdict, line: `${parts.join('; ')} (${figure(r.rounds)} rounds); ${kept}` };
}

/** "batch_size: max 46592 (exact: 46656 failed; holds: memory plateau ...), written 41536 (recommended)". */
function maxBatchLine(r: Frozen<MaxBatchSummary>): string {
  const p = r.param;
  const status =
    r.status === 'exact'
      ? `exact: ${figure(r.smallestFail)} failed`
      : r.status === 'ceiling'
        ? `at the ceiling: the true max is >= ${figure(r.max)}`
        : r.status === 'none-fits'
          ? 'no batch fits under the cap'
          : 'the workload failed';
  if (r.max === null) return `${p}: no max (${status})`;
  const g = r.memoryGrowth;
  const proof = g
    ? holds(g)
      ? 'holds: memory flattened'
      : `not proven to hold: ${growthPhrase(g)}`
    : r.confirmed
      ? 'confirmed'
      : 'not confirmed';
  const which =
    r.chosen === null
      ? 'nothing'
      : `${figure(r.chosen)}${
          r.chosen === r.recommended
            ? ' (recommended)'
            : r.chosen === r.fastest
              ? ' (fastest)'
              : r.chosen === r.max
                ? ' (the max)'
                : ''
        }`;
  const buckets = r.buckets
    ? `; per ${r.buckets.param}: ${r.buckets.rows.map((b) => `${figure(b.value)} -> ${figure(b.chosen)}`).join(', ')}`
    : '';
  return `${p}: max ${figure(r.max)} (${status}; ${proof}), written ${which}${buckets}`;
}

/** A sweep's answer: the config it chose, and those tied with it. */
export function sweepAnswer(r: Frozen<SweepSummary>): KindAnswer {
  const chosen = r.configs.find((c) => c.key === r.chosen_key);
  if (!chosen) return { verdict: 'none', line: 'no config finished: nothing chosen' };
  const speed = chosen.throughput ? ` at ${interval(chosen.throughput, (v) => v.toFixed(1))} samples/s` : '';
  const tied = r.tied.filter((k) => k !== r.chosen_key);
  const ties = tied.length > 0 ? `; tied with ${tied.join(', ')} (the cheaper setting kept)` : '';
  return { verdict: chosen.key, line: `chose ${chosen.key}${speed}${ties}` };
}

/** The run's last lines: each stage's answer, named. */
export function answerLines(answers: readonly StageAnswer[]): string[] {
  return answers.map((a) => `${a.stage} (${a.kind}): ${a.line}`);
}
