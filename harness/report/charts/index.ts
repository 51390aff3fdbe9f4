// Every chart of a run, built from its stage results and its journal alone.
import { claimChart } from './claim.js';
import { compareChart } from './compare.js';
import { maxBatchChart } from './max-batch.js';
import type { Chart } from './spec.js';
import { sweepCharts } from './sweep.js';
import { telemetryChart } from './telemetry.js';
import type { TrialRecord } from '../../domain/index.js';
import { roleKind } from '../../domain/index.js';
import type { StageOutcome } from '../../experiment/schema.js';

export function stageCharts(stage: StageOutcome, records: readonly TrialRecord[]): Chart[] {
  const own = records.filter((r) => r.stage === stage.name);
  const charts: Chart[] = [];
  let representative: TrialRecord | undefined;
  if (stage.kind === 'max-batch') {
    const r = stage.result;
    charts.push(maxBatchChart(stage.name, r, own));
    representative =
      lastOk(own.filter((t) => t.role === 'confirm')) ?? lastOk(own.filter((t) => Number(t.config[r.param]) === r.max));
  } else if (stage.kind === 'sweep') {
    const r = stage.result;
    charts.push(...sweepCharts(stage.name, r));
    const chosen = r.configs.find((c) => c.key === r.chosen_key);
    representative = lastOk(own.filter((t) => chosen?.trials.includes(t.index)));
  } else if (stage.kind === 'claim') {
    const chart = claimChart(stage.name, stage.result);
    if (chart) charts.push(chart);
    representative = lastOk(own.filter((t) => roleKind(t.role) === 'candidate'));
  } else if (stage.kind === 'compare') {
    const r = stage.result;
    charts.push(compareChart(stage.name, r));
    representative = lastOk(own.filter((t) => t.config[r.param] === r.chosen));
  }
  const telemetry = representative ?? lastOk(own);
  const chart = telemetry ? telemetryChart(stage.name, telemetry) : null;
  if (chart) charts.push(chart);
  return charts;
}

function lastOk(records: readonly TrialRecord[]): TrialRecord | undefined {
  return [...records].reverse().find((r) => r.outcome === 'ok');
}

export type { Chart } from './spec.js';
