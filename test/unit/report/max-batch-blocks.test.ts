// The max-batch and sweep sections: card predictions only where they mean something, the cap and the
// band of a repeated boundary, the lowerings later stages caused, pin_memory without a GPU, and a
// config that failed a trial never called a tie.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loweringSentence } from '../../../harness/report/stage-failure.js';
import { summaryMarkdown } from '../../../harness/report/summary-md.js';
import { stageSection, tiedWithBest, type Block } from '../../../harness/report/tables.js';
import { REPORT_FIXTURE } from '../../support/runs.js';
import type { CardPredictions, SweepSummary } from '../../../harness/domain/index.js';
import { readRunDir } from '../../../harness/experiment/run-file.js';
import type { StageOutcomeOf } from '../../../harness/experiment/schema.js';
import { STAGE_KIND_MODULES } from '../../../harness/engine/kinds/index.js';

const { run } = readRunDir(REPORT_FIXTURE);
const mb = run.result!.stages.find((s): s is StageOutcomeOf<'max-batch'> => s.kind === 'max-batch')!;
const sweep = run.result!.stages.find((s): s is StageOutcomeOf<'sweep'> => s.kind === 'sweep')!;
const words = (blocks: readonly Block[]) =>
  blocks
    .map((b) =>
      b.kind === 'table'
        ? b.table.rows.map((r) => r.join(' | ')).join('\n')
        : b.kind === 'list'
          ? b.items.join('\n')
          : b.text,
    )
    .join('\n');
const MIB = 2 ** 20;
const predictions = (o: Partial<CardPredictions>): CardPredictions => ({
  quantity: 'peak RSS of the trial (host memory)',
  fixed_bytes: 100 * MIB,
  per_sample_bytes: 150_000,
  rows: [{ card: '141 GB', bytes: 141e9, predicted: 928_992, rule_of_thumb: 206 }],
  statement: 'predictions, not measurements',
  ...o,
});
const withResult = (r: Partial<StageOutcomeOf<'max-batch'>['result']>): StageOutcomeOf<'max-batch'> => ({
  ...mb,
  result: { ...mb.result, ...r },
});

describe('card predictions', () => {
  it('are not shown from host RSS of a CPU job by default (shown: false)', () => {
    const s = words(
      stageSection(withResult({ predictions: predictions({ of_device: false, shown: false }) }), [], STAGE_KIND_MODULES)
        .answer,
    );
    assert.doesNotMatch(s, /Other cards|928992|prediction\)/);
  });

  it('are shown for a fit of device memory, or when asked for', () => {
    for (const p of [predictions({ of_device: true, shown: true }), predictions({ of_device: false, shown: true })]) {
      const s = words(stageSection(withResult({ predictions: p }), [], STAGE_KIND_MODULES).answer);
      assert.match(s, /141 GB \| 928992 \(prediction\) \| 206/);
    }
  });
});

describe('the cap and the boundary band', () => {
  it('names the cap the max was found under and the band of the repeated boundary', () => {
    const s = words(
      stageSection(
        withResult({
          cap_mechanism: 'cgroup-v1',
          cap_bytes: 2 * 2 ** 30,
          band: {
            repeats: 2,
            passed_all: 2352,
            failed_some: [{ batch: 2400, passed: 2, failed: 1 }],
            failed_all: 2464,
            steps: 50,
          },
        }),
        [],
        STAGE_KIND_MODULES,
      ).answer,
    );
    assert.match(
      s,
      /found under a 2\.00 GiB cap enforced by a memory cgroup \(v1\): the real memory of the whole trial tree/,
    );
    assert.match(
      s,
      /2 more 50-step runs .*: 2352 passed every run; above it 2400 passed 2 of 3; 2464 failed every run\. The max written is one that passed every run\./,
    );
  });

  it("gives the band model's estimate for the max written", () => {
    const s = words(
      stageSection(
        withResult({
          band: {
            repeats: 2,
            passed_all: 5472,
            failed_some: [
              { batch: 5632, passed: 3, failed: 0 },
              { batch: 5648, passed: 1, failed: 2 },
            ],
            failed_all: null,
            steps: 50,
            model: { runs: 9, limit: 5641.7, spread: 27.8, risk: 0.0124, max_risk: 0.02 },
          },
        }),
        [],
        STAGE_KIND_MODULES,
      ).answer,
    );
    assert.match(
      s,
      /5472 passed every run; above it 5632 passed 3 of 3, 5648 passed 1 of 3\. The limit is a band: the model of these 9 runs puts a run's limit at 5642 \+\/- 28, and the chance that a run at the max written, 5472, fails at 1\.2% \(max_risk 2\.0%\)\. The max written passed every one of its runs\./,
    );
  });

  it('says an address-space cap moves with arenas and threads', () => {
    const s = words(
      stageSection(withResult({ cap_mechanism: 'prlimit-as', cap_bytes: 2 ** 30 }), [], STAGE_KIND_MODULES).answer,
    );
    assert.match(s, /prlimit --as: each process's address space, which moves with glibc arenas and threads/);
  });
});

describe('a later stage that failed at the chosen batch', () => {
  const failure = {
    stage: 'loader',
    kind: 'every-config-oom' as const,
    param: 'batch_size',
    batch: 200,
    chosen_by: 'max-batch-1',
    configs: 6,
  };
  it('adds the lowering to the answer table', () => {
    const s = words(
      stageSection(
        withResult({
          lowered_after: [{ failure, config: { num_workers: 0 }, batch: 176, lowest_fail: 184, trials: [30, 31] }],
        }),
        [],
        STAGE_KIND_MODULES,
      ).answer,
    );
    assert.match(
      s,
      /lowered after stage loader \| 176 \| stage loader: every config OOMed at batch 200; lowered to 176 \(184 failed\)/,
    );
  });

  it('says a lowering inside the band and a stage that chose nothing because one config OOMed', () => {
    const some = { ...failure, stage: 'empty-cache', kind: 'oom-at-batch' as const, configs: 1, ran: 4 };
    const s = words(
      stageSection(
        withResult({
          lowered_after: [
            {
              failure: some,
              config: { empty_cache: 'never' },
              batch: 176,
              lowest_fail: 184,
              trials: [30, 31, 32, 33],
              band: { repeats: 2, risk: 0.0031 },
            },
          ],
        }),
        [],
        STAGE_KIND_MODULES,
      ).answer,
    );
    assert.match(
      s,
      new RegExp(
        'lowered after stage empty-cache \\| 176 \\| stage empty-cache: 1 of 4 configs OOMed at batch 200 and the stage ' +
          'chose nothing; lowered to 176 \\(184 failed; it passed 3 runs in a row, and the band model puts its chance ' +
          'of failing a run at 0.31%\\) under the config that failed',
      ),
    );
    assert.match(
      loweringSentence({
        failure: some,
        config: {},
        batch: 88,
        lowest_fail: 96,
        trials: [1, 2, 3],
        band: { repeats: 2, unexplained: [96] },
      }),
      /lowered to 88 \(96 failed; it passed 3 runs in a row; the band model cannot explain the failure at 96, .* the model gives no risk\)/,
    );
    const md = summaryMarkdown({ ...run.result!, stage_failures: [some] }, [], STAGE_KIND_MODULES);
    assert.match(md, /no lower batch\\_size held under the config that failed/);
  });

  it('heads the summary with the failure no lowering rescued', () => {
    const md = summaryMarkdown({ ...run.result!, stage_failures: [failure] }, [], STAGE_KIND_MODULES);
    assert.match(
      md,
      /## Failed\n\n- stage loader: every config OOMed at batch 200, the batch\\_size that max-batch-1 chose, and no lower batch\\_size held/,
    );
  });
});

describe('the loader sweep', () => {
  it('notes that pin_memory does nothing without a GPU', () => {
    const s = words(
      stageSection(
        { ...sweep, result: { ...sweep.result, inert: [{ param: 'pin_memory', why: 'no-gpu' }] } },
        [],
        STAGE_KIND_MODULES,
      ).details,
    );
    assert.match(s, /pin_memory does nothing without a GPU/);
  });

  it('never calls a config that failed a trial a tie', () => {
    const r: SweepSummary = structuredClone(sweep.result);
    const other = r.configs.find((c) => c.key !== r.chosen_key)!;
    r.tied = [r.chosen_key!, other.key];
    other.status = 'failed';
    assert.equal(tiedWithBest(r, other), false);
    other.status = 'finished';
    assert.equal(tiedWithBest(r, other), true);
  });
});
