// Report wording for the phases of training inside trials: where failed trials failed ("OOM in eval
// (epoch 1)"), and which phases other than steps ran (eval, checkpoint) at which epochs.
import type { FailedIn, TrialRecord } from '../domain/index.js';
import { figure } from './format.js';

/** Failed trials listed one by one at most; the rest are counted. */
const MAX_LISTED = 8;

/** "eval (epoch 1, after 12 steps)"; "train" alone when nothing more is known. */
export function phaseText(f: FailedIn): string {
  const at = [
    ...(f.epoch !== undefined ? [`epoch ${f.epoch}`] : []),
    ...(f.step !== undefined ? [`after ${figure(f.step)} step${f.step === 1 ? '' : 's'}`] : []),
  ];
  const killed = f.source === 'open-phase' ? ', killed before it ended' : '';
  return `${f.phase}${at.length > 0 ? ` (${at.join(', ')}${killed})` : killed ? ` (${killed.slice(2)})` : ''}`;
}

/** A trial's outcome with its phase when it failed in a known one: "OOM in eval (epoch 1)". */
export function outcomeText(t: Pick<TrialRecord, 'outcome' | 'failed_in'>): string {
  const f = t.failed_in;
  if (t.outcome === 'ok' || !f) return t.outcome;
  return `${outcomeWord(t.outcome)} in ${f.phase}${f.epoch !== undefined ? ` (epoch ${f.epoch})` : ''}`;
}

const outcomeWord = (outcome: TrialRecord['outcome']) => (outcome === 'oom' ? 'OOM' : outcome);

/**
 * Sentences for a stage's trials: the failures outside the training steps (eval, checkpoint, setup),
 * each with its phase, and the phases that ran inside the trials. Empty when no trial reported phases.
 */
export function phaseSentences(records: readonly TrialRecord[], param: string | undefined): string[] {
  const out: string[] = [];
  const failed = records.filter((t) => t.outcome !== 'ok' && t.failed_in !== undefined);
  const outside = failed.filter((t) => t.failed_in!.phase !== 'train');
  if (outside.length > 0) {
    const listed = outside.slice(0, MAX_LISTED).map((t) => {
      const value =
        param !== undefined && t.config[param] !== undefined ? ` (${param}=${String(t.config[param])})` : '';
      return `trial ${figure(t.index)}${value}: ${outcomeWord(t.outcome)} in ${phaseText(t.failed_in!)}`;
    });
    const more = outside.length > MAX_LISTED ? `, and ${figure(outside.length - MAX_LISTED)} more` : '';
    const inTrain = failed.length - outside.length;
    const train = inTrain > 0 ? `; ${figure(inTrain)} failed in training steps` : '';
    out.push(`Failed outside the training steps: ${listed.join('; ')}${more}${train}.`);
  }
  const ran = new Map<string, Set<number>>();
  for (const t of records)
    for (const p of t.phases ?? []) {
      const epochs = ran.get(p.phase) ?? new Set<number>();
      if (p.epoch !== undefined) epochs.add(p.epoch);
      ran.set(p.phase, epochs);
    }
  if (ran.size > 0) {
    const phases = [...ran].map(([name, epochs]) => {
      const runs = records.reduce((n, t) => n + (t.phases ?? []).filter((p) => p.phase === name).length, 0);
      const list = [...epochs].sort((a, b) => a - b).join(', ');
      const at = epochs.size > 0 ? ` (at the end of epoch${epochs.size > 1 ? 's' : ''} ${list})` : '';
      return `${name} ${figure(runs)}×${at}`;
    });
    out.push(`Phases run inside the trials besides the steps: ${phases.join(', ')}.`);
  }
  return out;
}
