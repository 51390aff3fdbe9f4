// The sentences of the typed stage failures and lowerings (domain/stages.ts), for the CLI and the reports.
import type { StageFailure, StageLowering } from '../domain/index.js';
import { riskPercent } from '../search/band-model.js';
import type { Frozen } from '../util/frozen.js';

const what = (param: string) => (param === 'batch_size' ? 'batch' : param);

/** "stage loader: every config OOMed at batch 200". */
export function failureHead(f: StageFailure): string {
  if (f.kind === 'chosen-config-oom') {
    const chosen = Object.entries(f.chosen ?? {})
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(' ');
    const t = f.trials ? ` in ${f.trials.oom} of its ${f.trials.ran} trials` : '';
    return `stage ${f.stage}: the config it chose (${chosen}) OOMed at ${what(f.param)} ${f.batch}${t}`;
  }
  if (f.kind === 'oom-at-batch')
    return `stage ${f.stage}: ${f.configs} of ${f.ran ?? '?'} configs OOMed at ${what(f.param)} ${f.batch} and the stage chose nothing`;
  return `stage ${f.stage}: every config OOMed at ${what(f.param)} ${f.batch}`;
}

/** A failure no lowering rescued, as the CLI and the summary say it. */
export function stageFailureSentence(f: StageFailure): string {
  return (
    `${failureHead(f)}, the ${f.param} that ${f.chosen_by} chose, and no lower ${f.param} held under ${underWhat(f)}: ` +
    `no ${f.param} is written, and the stages after ${f.stage} did not run`
  );
}

/** The config a lowering ran under: a sweep's cheapest where every config failed, else the one that failed. */
export function underWhat(f: StageFailure): string {
  return f.kind === 'every-config-oom' ? "the stage's cheapest config" : 'the config that failed';
}

/** "(184 failed)", or with the band model's placement: how the lowered batch was found. */
export function loweredHow(l: Frozen<Pick<StageLowering, 'lowest_fail' | 'band'>>): string {
  if (!l.band) return `(${l.lowest_fail} failed)`;
  const runs = `it passed ${l.band.repeats + 1} runs in a row`;
  if (l.band.unexplained?.length)
    return (
      `(${l.lowest_fail} failed; ${runs}; the band model cannot explain the failure at ${l.band.unexplained.join(', ')}, ` +
      "a batch where it puts the chance of failing a run below max_risk: that failure is not the batch size's, " +
      'and the model gives no risk)'
    );
  const risk =
    l.band.risk === undefined
      ? ''
      : `, and the band model puts its chance of failing a run at ${riskPercent(l.band.risk)}`;
  return `(${l.lowest_fail} failed; ${runs}${risk})`;
}

/** One lowering caused by a later stage, as the max-batch section of the report says it. */
export function loweringSentence(l: StageLowering): string {
  const f = l.failure;
  if (l.batch === null)
    return `${failureHead(f)}; no lower ${f.param} held under ${underWhat(f)} in ${l.trials.length} trials`;
  return (
    `${failureHead(f)}; lowered to ${l.batch} ${loweredHow(l)} under ${underWhat(f)}, which ` +
    `${l.survived?.statement ?? 'held'}; the stage ran again at ${l.batch}`
  );
}

/** "stage loader: every config OOMed at batch_size 200; max-batch-1 lowered it to 176 (184 failed) ...". */
export function loweringNote(l: Frozen<StageLowering>, param: string): string {
  const f = l.failure;
  const head = failureHead(f);
  if (l.batch === null)
    return `${head}, and no lower ${param} held under ${underWhat(f)} in ${l.trials.length} trials; no ${param} is written`;
  return (
    `${head}; ${f.chosen_by} lowered it to ${l.batch} ${loweredHow(l)}, which ` +
    `${l.survived?.statement ?? 'held'}, and the stage ran again at ${l.batch}`
  );
}
