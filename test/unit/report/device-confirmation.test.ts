// A max-batch stage with predicted_by in the report: predicted against measured on its device, and the
// earlier stage's card table with the measured column.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stageSection, type Block } from '../../../harness/report/tables.js';
import { REPORT_FIXTURE } from '../../support/runs.js';
import { readRunDir } from '../../../harness/experiment/run-file.js';
import type { StageOutcomeOf } from '../../../harness/experiment/schema.js';
import { STAGE_KIND_MODULES } from '../../../harness/engine/kinds/index.js';

const { run, records } = readRunDir(REPORT_FIXTURE);
const stage = run.result!.stages.find((s): s is StageOutcomeOf<'max-batch'> => s.kind === 'max-batch')!;
const tables = (blocks: readonly Block[]) => blocks.flatMap((b) => (b.kind === 'table' ? [b.table] : []));
const MIB = 2 ** 20;

describe('device confirmation in the report', () => {
  it('shows device, memory, predicted (from the stage) and measured max, and probes', () => {
    const confirming: StageOutcomeOf<'max-batch'> = {
      ...stage,
      name: 'a100-40',
      chosen: {},
      evidence: {},
      result: {
        ...stage.result,
        chosen: null,
        choose_rule: "this stage confirms a100-80's prediction",
        device_confirmation: {
          of_stage: 'a100-80',
          device: 'NVIDIA A100-SXM4-40GB',
          host: 'node7',
          memory_bytes: 40960 * MIB,
          predicted: 192,
          measured: 184,
          status: 'exact',
          probes: 4,
        },
      },
    };
    const s = stageSection(
      confirming,
      records.filter((r) => r.stage === stage.name),
      STAGE_KIND_MODULES,
    );
    const t = tables(s.answer).find((x) => x.headers[0] === 'device')!;
    assert.deepEqual(t.headers, [
      'device',
      'memory',
      `predicted max ${stage.result.param} (from a100-80)`,
      `measured max ${stage.result.param}`,
      'probes',
    ]);
    assert.deepEqual(t.rows, [['NVIDIA A100-SXM4-40GB (node7)', '40.00 GiB', '192 (prediction)', '184', '4']]);
  });

  it("adds the measured column to the predicting stage's card table when a row has one", () => {
    const rows = [
      { card: '40 GB', bytes: 40 * 2 ** 30, predicted: 192, rule_of_thumb: 54, measured: 192 },
      { card: '80 GB', bytes: 80 * 2 ** 30, predicted: 392, rule_of_thumb: 114 },
    ];
    const predicting: StageOutcomeOf<'max-batch'> = {
      ...stage,
      result: {
        ...stage.result,
        predictions: { quantity: 'device', fixed_bytes: 2048 * MIB, per_sample_bytes: 200 * MIB, rows, statement: 's' },
      },
    };
    const t = tables(stageSection(predicting, [], STAGE_KIND_MODULES).answer).find((x) => x.headers[0] === 'card')!;
    assert.equal(t.headers.at(-1), 'measured');
    assert.deepEqual(t.rows, [
      ['40 GB', '192 (prediction)', '54', '192'],
      ['80 GB', '392 (prediction)', '114', '-'],
    ]);
  });
});
