// A stage's typed notes as sentences: the one place they are worded (run.json keeps the facts). The
// terminal, summary.md and report.html print them through noteText.
import type { Frozen } from '../util/frozen.js';
import { exceptionText, failureCause, type NoteOf, type StageNote, type StageNoteKind } from '../domain/index.js';
import { fmtBand, undecidedCi } from '../analysis/undecided.js';
import { riskPercent } from '../search/band-model.js';
import { growthNote } from '../search/confirmation.js';
import { pctInterval } from './format.js';
import { loweringNote } from './stage-failure.js';

const TIMEOUT = 'limits.timeout';

/** The sentence of a stage note. */
export function noteText(n: Frozen<StageNote>): string {
  // WORDS is keyed by kind, so the entry for n.kind takes this kind of note.
  return (WORDS[n.kind] as (note: Frozen<StageNote>) => string)(n);
}

/** Every kind's sentence: a kind without one does not build. */
const WORDS: { [K in StageNoteKind]: (n: Frozen<NoteOf<K>>) => string } = {
  'timed-out-rerun': (n) =>
    `batch ${n.batch} timed out in a ${n.role === 'probe' ? 'probe' : `${n.role} run`} (trial ${n.trial}); ` +
    'a timeout says nothing about memory, so it ran again and that run counts',
  'grows-with-steps': (n) =>
    `batch ${n.batch} passed its probe but failed its confirmation (${n.outcome}): ` +
    'memory grows with steps, so the search went on with probes that run until memory flattens ' +
    `(at least ${n.steps} steps)`,
  'search-stalled': (n) =>
    `batch ${n.batch} timed out twice in a row (${n.reason ?? TIMEOUT}): a timeout says ` +
    'nothing about memory, so the search stopped rather than take it for a failure; raise limits.timeout ' +
    '(a run until memory flattens takes the warm-up plus up to confirm_max_steps steps)',
  'workload-broken': (n) => {
    const why = n.error ? exceptionText(n.error) : (n.reason ?? '');
    return `the workload failed at batch ${n.batch} (${n.outcome}${why ? `: ${why}` : ''}); fix it before tuning`;
  },
  'none-fits': (n) =>
    `no batch fits: the smallest batch probed, ${n.smallest}, ran out of memory; lower start or multiple_of, ` +
    'raise limits.memory, or make the model smaller',
  ceiling: (n) =>
    `every probe up to the ceiling ${n.max} fit; the true max is at least ${n.max} (raise ceiling to search further)`,
  'probe-limit': (n) => `stopped at the probe limit (${n.probes} probes) before the bracket closed`,
  'not-proven-to-hold': (n) => growthNote(n.batch, n.growth) ?? `batch ${n.batch}: its memory flattened`,
  'neighbour-bound-failed': (n) =>
    `batch ${n.batch} failed (${n.outcome}) although a neighbouring bucket's max showed it should fit: ` +
    'memory is not monotone in the bucket parameter here, so this bucket was searched from below',
  'repeat-timed-out': (n) =>
    `a boundary repeat at ${n.batch} timed out (${n.reason ?? TIMEOUT}): a timeout says nothing about ` +
    'memory, so it is left out of the band and the repeat ran again',
  'max-lowered-by-repeats': loweredByRepeats,
  'recommended-by-fraction': () => 'recommended uses a batch fraction: the workload reported no resident memory',
  'headroom-not-kept': () => 'no tested batch kept the requested headroom',
  'failed-below-max': (n) =>
    `batch ${n.batch} failed (${n.outcome}) below the max ${n.max}: ` +
    `the workload's memory is not monotone in batch size or the limit is flaky`,
  'fastest-below-max': (n) =>
    `batch ${n.fastest} reaches within ${Math.round(n.tolerance * 100)}% of the peak throughput; ` +
    `the max (${n.max}) buys memory pressure, not speed`,
  'latency-not-met': (n) => `no tested batch met ${n.quantile} step latency <= ${n.seconds * 1000} ms`,
  'prediction-measured': (n) =>
    n.predicted === null
      ? `no prediction from ${n.of_stage} for ${n.device}`
      : `${n.of_stage} predicted ${n.predicted} on ${n.device}, measured ${n.measured ?? 'none'}` +
        `${n.status === 'exact' ? '' : ` (${n.status})`}`,
  'batch-lowered': (n) => loweringNote(n.lowering, n.param),
  'race-stopped': (n) =>
    `race stopped after ${n.rounds} rounds: ` +
    `the ${n.left} configs left are within ${(n.band * 100).toFixed(1)}% of the leader (noise_band)`,
  'budget-ran-out': (n) =>
    `the budget ran out after ${n.trials} trials (${n.trial_seconds.toFixed(1)} trial-seconds, ` +
    `${n.rounds} complete rounds)`,
  'pooled-intervals': (n) =>
    `${n.configs} config(s) ran fewer than ${n.min_trials} trials: ` +
    `their CIs use the between-trial spread pooled over the stage's configs (${n.df} degrees of freedom)`,
  'nothing-chosen': (n) => {
    const ok = n.trials - n.failed;
    const first = n.first;
    return (
      `every config failed at least one trial (${n.failed} of ${n.trials} trials failed: ${n.outcomes.join(', ')}` +
      `${ok > 0 ? `; ${ok} finished` : ''}): nothing was chosen` +
      `${first ? ` (trial ${first.trial}: ${first.outcome}, ${failureCause(first)})` : ''}`
    );
  },
  'inert-param': (n) =>
    `${n.param} does nothing without a GPU (no CUDA device here: pinned host memory only speeds copies to one); ` +
    'its values measure the same work, so a difference between them is noise',
  'arm-failed-early': (n) =>
    `${n.arm === null ? 'the baseline' : `arm ${n.arm}`} failed (${n.outcome}) ` +
    'before any successful trial; it is not run again',
  'arm-verdict': armVerdict,
  'arm-not-compared': (n) =>
    `${n.param}=${String(n.value)} vs ${String(n.baseline)}: ` +
    `${n.baseline_failed ? 'the baseline' : 'this arm'} has no successful trial, so there is nothing to compare`,
  'sequential-cis': (n) =>
    `CIs of the ratios are sequential 95% CIs (paired rounds, alpha split over ${n.arms} arm(s) ` +
    'and spent over the looks), valid at whichever look decided',
  'name-only': (n) =>
    n.flagged.length === 0
      ? 'the workload called empty_cache() in no arm (it only acts on CUDA): ' +
        'on this device the policies differ in name only, and no difference was found'
      : 'the workload called empty_cache() in no arm (it only acts on CUDA): ' +
        'on this device the policies differ in name only, so the difference measured for ' +
        n.flagged.map((v) => `${n.param}=${String(v)}`).join(', ') +
        ' comes from the machine (contention or drift during the run), not from the policy; the baseline is kept',
  'baseline-failed': (n) => `the baseline ${n.param}=${String(n.baseline)} has no successful trial; nothing was chosen`,
  noise: (n) => n.warning.message,
  text: (n) => n.text,
};

function loweredByRepeats(n: Frozen<NoteOf<'max-lowered-by-repeats'>>): string {
  const head = n.failed
    ? `batch ${n.batch} failed a repeat: the max written is ${n.max ?? 'none'}`
    : `batch ${n.batch} passed every run, but sits in the band where identical runs fail: the max written is ${n.max ?? 'none'}`;
  const risk = n.risk
    ? `, whose chance of failing a run the band model puts at ${riskPercent(n.risk.risk)} ` +
      `(at most ${riskPercent(n.risk.max_risk)}, max_risk)`
    : '';
  return head + risk;
}

/** "workers=4 vs 0: faster (decided after 5 rounds); throughput +12.0% [+8.1%, +16.0%], peak memory ...". */
function armVerdict(n: Frozen<NoteOf<'arm-verdict'>>): string {
  const label = `${n.param}=${String(n.value)} vs ${String(n.baseline)}`;
  const rounds = n.decided_at ?? '?';
  const why =
    n.decision === 'equivalent'
      ? ` (within the ${fmtBand(n.band)} noise band after ${rounds} rounds)`
      : n.decision === 'undecided'
        ? n.throughput_ratio
          ? ` (after ${rounds} rounds: ${undecidedCi(n.throughput_ratio, n.band)})`
          : ` (fewer than 3 paired rounds: no CI)`
        : ` (decided after ${rounds} rounds)`;
  const speed = n.throughput_ratio ? `throughput ${pctInterval(n.throughput_ratio)}` : 'throughput not comparable';
  const memory = n.memory_ratio ? `, peak memory ${pctInterval(n.memory_ratio)} (${n.memory_verdict})` : '';
  // An undecided arm's stored verdict is "no significant difference"; what it says is "undecided".
  const verdict = n.decision === 'undecided' ? 'undecided' : n.verdict;
  return `${label}: ${verdict}${why}; ${speed}${memory}`;
}
