// Report wording for the phases of training: "OOM in eval (epoch 1)" in the trial table and a stage's
// sentences on where trials failed and which phases ran, from the typed record fields.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { outcomeText, phaseSentences, phaseText } from '../../../harness/report/phases.js';
import { stageSection, type Block } from '../../../harness/report/tables.js';
import { REPORT_FIXTURE } from '../../support/runs.js';
import type { TrialRecord } from '../../../harness/domain/index.js';
import { readRunDir } from '../../../harness/experiment/run-file.js';
import { STAGE_KIND_MODULES } from '../../../harness/engine/kinds/index.js';

const { run, records } = readRunDir(REPORT_FIXTURE);
const stage = run.result!.stages.find((s) => s.name === 'max-batch-1')!;
const own = records.filter((r) => r.stage === 'max-batch-1');
const texts = (blocks: readonly Block[]) => blocks.flatMap((b) => (b.kind === 'text' ? [b.text] : []));

/** The fixture's max-batch records: the first failed one OOMed in eval at epoch 1, the ok ones ran eval and save. */
function withPhases(): TrialRecord[] {
  let marked = false;
  return own.map((r) => {
    const copy = structuredClone(r);
    if (copy.outcome === 'ok')
      copy.phases = [0, 1].flatMap((epoch) => [
        { phase: 'eval', epoch, seconds: 0.2, peak_bytes: 4e8, peak_scope: 'phase' as const },
        { phase: 'checkpoint', epoch, seconds: 0.1 },
      ]);
    else if (!marked) {
      marked = true;
      copy.failed_in = { phase: 'eval', epoch: 1, step: 20, source: 'event' };
    } else copy.failed_in = { phase: 'train', epoch: 0, source: 'outside-phases' };
    return copy;
  });
}

describe('phase wording', () => {
  it('says in which phase and epoch a trial failed', () => {
    assert.equal(
      outcomeText({ outcome: 'oom', failed_in: { phase: 'eval', epoch: 1, source: 'event' } }),
      'OOM in eval (epoch 1)',
    );
    assert.equal(
      outcomeText({ outcome: 'crash', failed_in: { phase: 'checkpoint', source: 'open-phase' } }),
      'crash in checkpoint',
    );
    assert.equal(outcomeText({ outcome: 'oom' }), 'oom', 'no phase known: the outcome alone');
    assert.equal(phaseText({ phase: 'eval', epoch: 0, step: 1, source: 'event' }), 'eval (epoch 0, after 1 step)');
    assert.equal(outcomeText({ outcome: 'ok', failed_in: { phase: 'eval', source: 'event' } }), 'ok');
    assert.equal(
      phaseText({ phase: 'checkpoint', epoch: 0, step: 10, source: 'open-phase' }),
      'checkpoint (epoch 0, after 10 steps, killed before it ended)',
    );
  });

  it('puts the phase in the trial table and the failures and phases in the answer', () => {
    const marked = withPhases();
    const failed = marked.filter((r) => r.outcome !== 'ok');
    assert.ok(failed.length >= 2 && marked.some((r) => r.outcome === 'ok'), 'the fixture has both');
    const s = stageSection(stage, marked, STAGE_KIND_MODULES);
    const table = s.details[0]!;
    assert.ok(table.kind === 'table');
    const outcomes = table.table.rows.map((row) => row[table.table.headers.indexOf('outcome')]);
    assert.ok(outcomes.includes('OOM in eval (epoch 1)'), outcomes.join(', '));
    assert.ok(outcomes.includes('OOM in train (epoch 0)'), outcomes.join(', '));
    const said = texts(s.answer).join('\n');
    const first = failed[0]!;
    assert.match(
      said,
      new RegExp(
        `Failed outside the training steps: trial ${first.index} \\(batch_size=${String(first.config['batch_size'])}\\): OOM in eval \\(epoch 1, after 20 steps\\); ${failed.length - 1} failed in training steps\\.`,
      ),
    );
    const ok = marked.filter((r) => r.outcome === 'ok').length;
    assert.match(
      said,
      new RegExp(
        `Phases run inside the trials besides the steps: eval ${ok * 2}× \\(at the end of epochs 0, 1\\), checkpoint ${ok * 2}×`,
      ),
    );
  });

  it('says nothing of phases where no trial reported any', () => {
    assert.deepEqual(phaseSentences(own, 'batch_size'), []);
    assert.ok(!texts(stageSection(stage, own, STAGE_KIND_MODULES).answer).some((t) => /phase/i.test(t)));
  });
});
