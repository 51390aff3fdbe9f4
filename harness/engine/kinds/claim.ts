// The claim stage kind: a published speedup checked with interleaved baseline/candidate pairs.
import { checkClaim } from '../../experiment/checks.js';
import type { ClaimStageSpec } from '../../experiment/schema.js';
import type { WorkloadRun } from '../../experiment/kinds.js';
import { lastOk } from '../../report/charts/index.js';
import { claimChart } from '../../report/charts/claim.js';
import { claimBlocks } from '../../report/tables.js';
import { groupsByConfig } from '../stages/lower-after-failure.js';
import { runClaimStage } from '../stages/claim.js';
import { claimAnswer } from '../../report/answers.js';
import type { StageKindModule } from './types.js';

const SIDES = ['baseline', 'candidate'] as const;

/** A side runs its own program when the claim gives one, else workload.command, with its config's values. */
function side(stage: ClaimStageSpec, i: number, which: (typeof SIDES)[number]): WorkloadRun {
  const own = stage[`${which}_command`];
  return {
    side: `${which} side`,
    varied: new Map(Object.keys(stage[which]).map((p) => [p, { always: true }])),
    commands: own ? [[`stages[${i}].${which}_command`, own]] : [],
    usesDefault: !own,
  };
}

export const claimKind: StageKindModule<'claim'> = {
  check: checkClaim,
  use: (stage, i) => ({
    runs: SIDES.map((s) => side(stage, i, s)),
    // Its sides are its own: later stages do not run with them.
    passesOn: false,
    values: SIDES.flatMap((s) => Object.entries(stage[s]).map(([p, v]) => [`stages[${i}].${s}.${p}`, p, v] as const)),
    conditional: [],
  }),
  run: runClaimStage,
  // About half its pairs.
  plannedTrials: (stage) => stage.max_pairs,
  failed: () => false,
  failureAtBatch: { groups: groupsByConfig, wholeConfigs: false, lightest: () => null },
  blocks: (r) => [claimBlocks(r), []],
  answer: claimAnswer,
  charts: (name, r, own) => {
    const chart = claimChart(name, r);
    return {
      charts: chart ? [chart] : [],
      representative: lastOk(own.filter((t) => t.role.kind === 'candidate')),
    };
  },
  keyMetrics: (s) => {
    const ci = s.result.speedup;
    return ci ? [{ what: 'speedup', origin: { kind: 'speedup' }, value: ci.estimate, low: ci.low, high: ci.high }] : [];
  },
  source: (s, spec, origin) =>
    origin.kind === 'speedup'
      ? { kind: 'claim', stage: spec, config: s.result.candidate, trials: s.result.pairs }
      : null,
};
