// The compare stage kind: arms of one parameter against a baseline, each decided faster, slower or equivalent.
import { checkCompare } from '../../experiment/checks.js';
import { lastOk } from '../../report/charts/index.js';
import { compareChart } from '../../report/charts/compare.js';
import { compareBlocks } from '../../report/tables.js';
import { groupsByConfig } from '../stages/lower-after-failure.js';
import { runCompareStage } from '../stages/compare.js';
import { compareAnswer } from '../../report/answers.js';
import type { StageKindModule } from './types.js';

export const compareKind: StageKindModule<'compare'> = {
  check: checkCompare,
  use: (stage, i) => {
    const own = stage.commands ?? {};
    return {
      runs: [
        {
          varied: new Map([[stage.param, { always: true }]]),
          // An arm without a program of its own runs workload.command.
          commands: Object.entries(own).map(
            ([arm, argv]) => [`stages[${i}].commands.${JSON.stringify(arm)}`, argv] as const,
          ),
          usesDefault: stage.arms.some((a) => own[String(a)] === undefined),
        },
      ],
      passesOn: true,
      values: stage.arms.map((v, j) => [`stages[${i}].arms[${j}]`, stage.param, v] as const),
      conditional: [],
    };
  },
  run: runCompareStage,
  // Its first rounds.
  plannedTrials: (stage) => stage.arms.length * stage.repeats,
  failed: () => false,
  failureAtBatch: { groups: groupsByConfig, wholeConfigs: false, lightest: () => null },
  blocks: (r) => [[], compareBlocks(r)],
  answer: compareAnswer,
  charts: (name, r, own) => ({
    charts: [compareChart(name, r)],
    representative: lastOk(own.filter((t) => t.config[r.param] === r.chosen)),
  }),
  keyMetrics: (s) =>
    s.result.arms.flatMap((arm) =>
      arm.throughput
        ? [
            {
              what: `samples/s ${s.result.param}=${String(arm.value)}`,
              origin: { kind: 'arm', value: arm.value },
              value: arm.throughput.estimate,
              low: arm.throughput.low,
              high: arm.throughput.high,
            },
          ]
        : [],
    ),
  source: (s, spec, origin, configOf) => {
    const arm = origin.kind === 'arm' ? s.result.arms.find((a) => a.value === origin.value) : undefined;
    const config = arm ? configOf(arm.trials) : null;
    const command = arm ? spec.commands?.[String(arm.value)] : undefined;
    return arm && config
      ? { kind: 'config', config, trials: arm.trials.length, steps: spec.steps, ...(command && { command }) }
      : null;
  },
};
