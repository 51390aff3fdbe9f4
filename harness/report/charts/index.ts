// Every chart of a run, built from its stage results and its journal alone: each stage's kind's charts,
// then the telemetry of its representative trial.
import type { Chart } from './spec.js';
import { telemetryChart } from './telemetry.js';
import type { TrialRecord } from '../../domain/index.js';
import type { StageOutcome } from '../../experiment/schema.js';
import { kindCharts, type ReportKinds } from '../kinds.js';

export function stageCharts(stage: StageOutcome, records: readonly TrialRecord[], kinds: ReportKinds): Chart[] {
  const own = records.filter((r) => r.stage === stage.name);
  const { charts, representative } = kindCharts(kinds, stage, own);
  const telemetry = representative ?? lastOk(own);
  const chart = telemetry ? telemetryChart(stage.name, telemetry) : null;
  if (chart) charts.push(chart);
  return charts;
}

/** The last successful trial of `records`. */
export function lastOk(records: readonly TrialRecord[]): TrialRecord | undefined {
  return [...records].reverse().find((r) => r.outcome === 'ok');
}

export type { Chart } from './spec.js';
