// Whether a changed chosen value is a change the night decided, or a tie within the noise band that only
// flipped which of the tied values was picked. Tonight's run says which: its sweep lists the configs tied
// with the one it chose, and its compare decided each arm against the baseline. A max batch is a measured
// memory answer: a different one is a change.
import type { ParamValue } from '../domain/index.js';
import type { StageOutcome } from '../experiment/schema.js';

export interface ChosenChange {
  param: string;
  before: ParamValue | null;
  after: ParamValue | null;
}

/** Why tonight's run holds the earlier value tied with tonight's, or null when the change is decided. */
export function tiedBy(change: ChosenChange, stages: readonly StageOutcome[]): string | null {
  const { param, before, after } = change;
  if (before === null || after === null) return null;
  for (const s of stages) {
    if (s.chosen[param] === undefined) continue;
    // Only the stage that chose tonight's value can say what it was tied with.
    if (s.chosen[param] !== after) return null;
    switch (s.kind) {
      case 'sweep': {
        const tied = new Set(s.result.tied.filter((k) => k !== s.result.chosen_key));
        const rows = s.result.configs.filter((c) => c.config[param] === before && tied.has(c.key));
        if (rows.length > 0) return `stage ${s.name}: ${rows[0]!.key} is tied with the config chosen tonight`;
        return null;
      }
      case 'compare': {
        const r = s.result;
        const arm = (v: ParamValue) => r.arms.find((a) => a.value === v);
        const [was, now] = [arm(before), arm(after)];
        if (!was || !now) return null;
        // Decided: tonight's arm was shown faster than the baseline that was kept before, or the arm kept
        // before was shown slower than tonight's baseline.
        if (was.baseline && now.decision === 'faster') return null;
        if (now.baseline && was.decision === 'slower') return null;
        return `stage ${s.name}: ${param}=${String(before)} was ${was.baseline ? 'the baseline' : (was.decision ?? was.verdict)} and ${param}=${String(after)} ${now.baseline ? 'the baseline' : (now.decision ?? now.verdict)}: neither shown faster than the other`;
      }
      default:
        return null;
    }
  }
  return null;
}
