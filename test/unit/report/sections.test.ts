// Each stage's section: the answer first, the foreign-load warning, the workload-report columns
// only where they inform, and config labels that name one config each.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { abbreviations, configLabels } from '../../../harness/report/charts/config-labels.js';
import { foreignLoadWarning } from '../../../harness/report/foreign-load.js';
import { reportHtml } from '../../../harness/report/html.js';
import { summaryMarkdown } from '../../../harness/report/summary-md.js';
import { stageSection, type Block } from '../../../harness/report/tables.js';
import { REPORT_FIXTURE } from '../../support/runs.js';
import type { CompareSummary, ForeignLoad, TrialRecord } from '../../../harness/domain/index.js';
import { readRunDir } from '../../../harness/experiment/run-file.js';
import { STAGE_KIND_MODULES } from '../../../harness/engine/kinds/index.js';

const { run, records } = readRunDir(REPORT_FIXTURE);
const result = run.result!;
const stageOf = (name: string) => result.stages.find((s) => s.name === name)!;
const own = (name: string) => records.filter((r) => r.stage === name);
const texts = (blocks: readonly Block[]) =>
  blocks.map((b) =>
    b.kind === 'table' ? b.table.headers.join(' | ') : b.kind === 'list' ? b.items.join(' / ') : b.text,
  );

/** The fixture's records of a stage, the first `n` of them run beside a busy tenant. */
function underLoad(name: string, n: number, f: Partial<ForeignLoad> = {}): TrialRecord[] {
  return own(name).map((r, i) => {
    const copy = structuredClone(r);
    copy.telemetry.summary.foreign_load =
      i < n
        ? { mean: 0.98, p95: 1, max: 1, available_cores: 2, share: 0.49, busy_cores: 1.99, ...f }
        : { mean: 0.04, p95: 0.1, max: 0.12, available_cores: 2, share: 0.02, busy_cores: 1.02 };
    return copy;
  });
}

describe('stage sections', () => {
  it('open with the answer: the chosen value, its CI and trials, and why', () => {
    const s = stageSection(stageOf('threads'), own('threads'), STAGE_KIND_MODULES);
    assert.match(
      texts(s.answer)[0]!,
      /^Answer: intra_op_threads=2 at 156644\.0 \[155820\.3, 157521\.2\] samples\/s \(95% CI; trials 11, 12\)\. Why: intra_op_threads=2 is significantly better/,
    );
    assert.ok(
      !texts(s.answer).some((t, i) => i > 0 && t.includes('is significantly better than every other config')),
      'a note that repeats the rule is not shown twice',
    );
    assert.match(texts(s.details)[0]!, /^Strategy grid over intra_op_threads/);
    const mb = stageSection(stageOf('max-batch-1'), own('max-batch-1'), STAGE_KIND_MODULES);
    assert.deepEqual(
      mb.answer.map((b) => b.kind),
      ['text', 'table', 'text', 'list'],
    );
    assert.match(texts(mb.answer)[0]!, /^Answer: batch_size=1024 at .* samples\/s \(95% CI; trial 8\)\. Why: fastest:/);
    assert.equal(mb.details.length, 1, 'the trial table comes after the charts');
  });

  it('shows the empty_cache column only where the policy is compared or an arm called it', () => {
    const arena = stageOf('arena');
    assert.equal(arena.kind, 'compare');
    if (arena.kind !== 'compare') return;
    const headers = (r: CompareSummary) =>
      texts(stageSection({ ...arena, result: r }, own('arena'), STAGE_KIND_MODULES).details).join('\n');
    const base = arena.result;
    assert.doesNotMatch(headers(base), /empty_cache calls/, 'arena compare without empty_cache counts');
    const zero = { ...base, arms: base.arms.map((a) => ({ ...a, empty_cache: { calls: 0, seconds: 0 } })) };
    assert.doesNotMatch(headers(zero), /empty_cache calls/, 'all zero: no information');
    const some = {
      ...base,
      arms: base.arms.map((a, i) => ({ ...a, empty_cache: { calls: i * 40, seconds: i * 0.2 } })),
    };
    assert.match(headers(some), /empty_cache calls/);
    assert.match(headers({ ...zero, param: 'empty_cache' }), /empty_cache calls/, 'the compared parameter');
  });
});

describe('foreign load in reports', () => {
  it('warns per stage: how many trials, how much, and what it does to comparisons', () => {
    const w = foreignLoadWarning('compare', underLoad('arena', 3))!;
    assert.match(
      w,
      new RegExp(
        '^Foreign load: 3 of 10 trials \\(14, 15, 16\\) ran while processes outside the trial used 0\\.98 cores ' +
          'on average, up to 49% of the 2 cores available to the job; the comparison in this stage may be biased: ' +
          'interleaving the arms spreads the load over them, but it inflates the noise',
      ),
    );
    assert.match(
      foreignLoadWarning('sweep', underLoad('threads', 1, { mean: 0.6, share: 0.3 }))!,
      /1 of 4 trials \(10\) .* 0\.60 cores .* a config measured under load looks slower than it is/,
    );
    assert.equal(foreignLoadWarning('compare', underLoad('arena', 0)), null, 'below the threshold');
    assert.equal(foreignLoadWarning('compare', own('arena')), null, 'records of older versions have no figure');
  });

  it('summary.md and report.html carry the warning in the stage section, before the charts', () => {
    const loaded = records.map((r) =>
      r.stage === 'arena' ? underLoad('arena', 2).find((x) => x.index === r.index)! : r,
    );
    const md = summaryMarkdown(result, loaded, STAGE_KIND_MODULES);
    assert.match(md, /## Stage arena \(compare\)[\s\S]*> \*\*Warning:\*\* Foreign load: 2 of 10 trials/);
    assert.equal((md.match(/Foreign load:/g) ?? []).length, 1, 'only the stage that ran under load');
    const chart = { chart: { name: 'compare-arena', title: 'arena', spec: {} }, svg: '<svg></svg>', stage: 'arena' };
    const html = reportHtml({
      result,
      records: loaded,
      charts: [chart],
      environment: {},
      files: [],
      kinds: STAGE_KIND_MODULES,
    });
    const section = html.slice(html.indexOf('<section class="stage" id="stage-arena">'));
    const warn = section.indexOf('<p class="warn">Foreign load: 2 of 10 trials');
    assert.ok(warn > 0 && warn < section.indexOf('<figure class="chart"'), 'the warning precedes the charts');
    assert.ok(section.indexOf('<div class="answer">') < warn, 'the answer precedes the warning');
  });
});

describe('config labels', () => {
  const loader = [
    { num_workers: 0, prefetch_factor: undefined, pin_memory: false, persistent_workers: undefined },
    { num_workers: 1, prefetch_factor: 2, pin_memory: false, persistent_workers: false },
    { num_workers: 1, prefetch_factor: 4, pin_memory: true, persistent_workers: true },
    { num_workers: 2, prefetch_factor: 4, pin_memory: true, persistent_workers: false },
  ];
  const params = ['num_workers', 'prefetch_factor', 'pin_memory', 'persistent_workers'];

  it('abbreviates long labels to the initials of each word, with a legend', () => {
    const l = configLabels(params, loader);
    assert.deepEqual(l.labels, [
      'nw=0 pm=false',
      'nw=1 pf=2 pm=false pw=false',
      'nw=1 pf=4 pm=true pw=true',
      'nw=2 pf=4 pm=true pw=false',
    ]);
    assert.deepEqual(l.legend, [
      ['nw', 'num_workers'],
      ['pf', 'prefetch_factor'],
      ['pm', 'pin_memory'],
      ['pw', 'persistent_workers'],
    ]);
  });

  it('keeps full names when they fit, and leaves out parameters that do not vary', () => {
    const l = configLabels(
      ['intra_op_threads', 'inter_op_threads'],
      [
        { intra_op_threads: 1, inter_op_threads: 1 },
        { intra_op_threads: 2, inter_op_threads: 1 },
      ],
    );
    assert.deepEqual(l.labels, ['intra_op_threads=1', 'intra_op_threads=2']);
    assert.deepEqual(l.legend, []);
  });

  it('never gives two configs the same label', () => {
    assert.deepEqual(configLabels(['x'], [{ x: 1 }, { x: '1' }, { x: 2 }]).labels, ['x=1', 'x=1 #2', 'x=2']);
    // Two names with the same initials keep their full names.
    assert.deepEqual(
      [...abbreviations(['num_workers', 'new_width', 'pin_memory']).values()],
      ['num_workers', 'new_width', 'pm'],
    );
    const many = Array.from({ length: 24 }, (_, i) => ({
      num_workers: i % 3,
      prefetch_factor: 2 + (i % 2) * 2,
      pin_memory: i % 4 < 2,
      persistent_workers: i < 12,
    }));
    const labels = configLabels(params, many).labels;
    assert.equal(new Set(labels).size, 24);
  });
});
