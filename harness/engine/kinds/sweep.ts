// The sweep stage kind: a grid or a race over configs, the fastest chosen with its CI.
import type { Config } from '../../domain/index.js';
import { checkSweep } from '../../experiment/checks.js';
import { SWEEP_REPEATS } from '../../experiment/schema.js';
import { lastOk } from '../../report/charts/index.js';
import { sweepCharts } from '../../report/charts/sweep.js';
import { sweepBlocks } from '../../report/tables.js';
import { cheaper } from '../../search/rank.js';
import { gridSize } from '../../search/space.js';
import { runSweepStage } from '../stages/sweep.js';
import { sweepAnswer } from '../../report/answers.js';
import type { StageKindModule } from './types.js';

export const sweepKind: StageKindModule<'sweep'> = {
  check: checkSweep,
  use: (stage, i) => ({
    runs: [
      {
        varied: new Map(
          Object.keys(stage.params).map((p) => {
            const when = stage.applies_when[p];
            return [
              p,
              when === undefined
                ? { always: true }
                : { always: false, why: `applies_when leaves it out where ${when} is 0 or false (stages[${i}])` },
            ];
          }),
        ),
        commands: [],
        usesDefault: true,
      },
    ],
    passesOn: true,
    values: Object.entries(stage.params).flatMap(([p, spec]) =>
      Array.isArray(spec) ? spec.map((v, j) => [`stages[${i}].params.${p}[${j}]`, p, v] as const) : [],
    ),
    conditional: Object.keys(stage.applies_when),
  }),
  run: runSweepStage,
  // configs x rounds; a race: about halfway between its first look and its most rounds.
  plannedTrials: (stage) => {
    const configs = gridSize(stage.params).total;
    const most = stage.repeats ?? SWEEP_REPEATS[stage.strategy];
    const rounds = stage.strategy === 'grid' ? most : (stage.min_rounds + most) / 2;
    return Math.ceil(configs * rounds);
  },
  failed: (o) => Object.keys(o.chosen).length === 0 && o.result.configs.some((c) => c.status === 'failed'),
  failureAtBatch: {
    // The rows that ran.
    groups: (o, records) =>
      o.result.configs
        .filter((c) => c.status !== 'pruned' && c.trials.length > 0)
        .map((c) => c.trials.flatMap((i) => (records[i] ? [records[i]] : []))),
    wholeConfigs: true,
    // The cheapest config that ran, by the stage's cost order (else its parameters').
    lightest: (o, spec): Config | null => {
      const ran = o.result.configs.filter((c) => c.status !== 'pruned' && c.trials.length > 0);
      const order = spec.cost ?? o.result.params;
      return [...ran].sort((a, b) => cheaper(a.config, b.config, order))[0]?.config ?? {};
    },
  },
  blocks: (r) => [[], sweepBlocks(r)],
  answer: sweepAnswer,
  charts: (name, r, own) => {
    const chosen = r.configs.find((c) => c.key === r.chosen_key);
    return {
      charts: sweepCharts(name, r),
      representative: lastOk(own.filter((t) => chosen?.trials.includes(t.index))),
    };
  },
  keyMetrics: (s) => {
    const ci = s.result.configs.find((c) => c.key === s.result.chosen_key)?.throughput;
    return ci
      ? [
          {
            what: 'samples/s (chosen config)',
            origin: { kind: 'chosen-config' },
            value: ci.estimate,
            low: ci.low,
            high: ci.high,
          },
        ]
      : [];
  },
  source: (s, spec, origin) => {
    const row =
      origin.kind === 'chosen-config' ? s.result.configs.find((c) => c.key === s.result.chosen_key) : undefined;
    return row ? { kind: 'config', config: row.config, trials: row.trials.length, steps: spec.steps } : null;
  },
};
