// What `tunebench time` says about a scan's choice and an undecided compare, and the order of -L rows:
// the summary of stage results as the engine writes them (the shapes of run.json).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { timeSummary } from '../../../harness/analysis/time-summary.js';
import type { TrialRecord } from '../../../harness/domain/index.js';
import type { RunResult } from '../../../harness/experiment/run-file.js';

/** A finished timed run of `config` as trial `index` of `stage`. */
function record(stage: string, index: number, config: Record<string, string | number>, seconds: number): TrialRecord {
  return {
    stage,
    index,
    role: 'race',
    config,
    outcome: 'ok',
    reason: '',
    wall_seconds: seconds,
    process_seconds: seconds,
    timing: 'process',
    samples_per_second: 1 / seconds,
    exit_code: 0,
    steps: [],
  } as unknown as TrialRecord;
}

const interval = (estimate: number) => ({ estimate, low: estimate * 0.97, high: estimate * 1.03, level: 0.95 });

function run(stage: RunResult['stages'][number]): RunResult {
  return { run_dir: '/tmp/x', stages: [stage], warnings: [] } as unknown as RunResult;
}

/** -L n 1,2,3 where n=3 has the best estimate, every value is tied, and the leader was kept. */
function scan(): { result: RunResult; records: TrialRecord[] } {
  const values = [1, 2, 3];
  const records = values.flatMap((n, i) => [0, 1, 2].map((r) => record('scan', r * 3 + i, { n }, 0.1 - n * 0.001)));
  const rows = values.map((n, i) => ({
    key: `n=${n}`,
    config: { n },
    status: 'finished',
    trials: [i, 3 + i, 6 + i],
    throughput: interval(10 + n * 0.1),
    stall_fraction: null,
  }));
  const configs = [rows[2]!, rows[1]!, rows[0]!]; // the stage keeps them best estimate first
  return {
    records,
    result: run({
      name: 'scan',
      kind: 'sweep',
      chosen: { n: 3 },
      evidence: {},
      notes: [],
      result: {
        strategy: 'race',
        params: ['n'],
        configs,
        chosen_key: 'n=3',
        tied: ['n=3', 'n=2', 'n=1'],
        trials: 9,
        trial_seconds: 1,
        budget_exhausted: false,
      },
    } as unknown as RunResult['stages'][number]),
  };
}

describe('timeSummary', () => {
  it('-L rows keep the order the values were given, not the order of their estimates', () => {
    const { result, records } = scan();
    const s = timeSummary('scan', result, records);
    assert.deepEqual(
      s.commands.map((c) => c.label),
      ['n=1', 'n=2', 'n=3'],
    );
  });

  it('a kept leader is not called the cheapest of the tied values', () => {
    const { result, records } = scan();
    const line = timeSummary('scan', result, records).findings.find((f) => f.startsWith('chosen:'));
    assert.ok(line, 'a line says what was chosen');
    assert.doesNotMatch(line, /n=3, the cheapest of the tied values/);
    assert.match(line, /^chosen: n=3, the fastest by estimate: the cheaper tied values \(n=1, n=2\) are not shown/);
  });

  it('the cheapest tied value, when chosen, is called that, with the cost rule for its kind of value', () => {
    const { result, records } = scan();
    const stage = result.stages[0]!;
    if (stage.kind !== 'sweep') throw new Error('sweep expected');
    stage.result.chosen_key = 'n=1';
    const line = timeSummary('scan', result, records).findings.find((f) => f.startsWith('chosen:'));
    assert.equal(line, 'chosen: n=1, the cheapest of the tied values (smaller numbers count as cheaper)');
  });

  it('an undecided speed-up whose CI ends at 0.9955 is described as below 1, inside the band', () => {
    const arm = (value: string, baseline: boolean, trials: number[]) => ({
      value,
      baseline,
      trials,
      ok_trials: trials.length,
      failures: {},
      throughput: null,
      peak_memory: null,
      stall_fraction: null,
      throughput_ratio: baseline
        ? null
        : {
            estimate: 0.962,
            low: 0.93,
            high: 0.9955,
            level: 0.95,
            p: 0.04,
            n: 20,
            df: 19,
            se: 0.017,
            method: 'paired-t',
          },
      memory_ratio: null,
      throughput_p: null,
      memory_p: null,
      decision: baseline ? 'baseline' : 'undecided',
      decided_at: baseline ? null : 20,
      verdict: baseline ? 'baseline' : 'no significant difference',
      memory_verdict: baseline ? 'baseline' : 'not measured',
    });
    const records = [0, 1, 2, 3].map((i) => record('time', i, { command: i % 2 === 0 ? 'a' : 'b' }, 0.1));
    const result = run({
      name: 'time',
      kind: 'compare',
      chosen: {},
      evidence: {},
      notes: [],
      result: {
        param: 'command',
        baseline: 'a',
        noise_band: 0.02,
        arms: [arm('a', true, [0, 2]), arm('b', false, [1, 3])],
        rounds: 20,
        trials: 40,
        trial_seconds: 4,
        budget_exhausted: false,
        chosen: 'a',
      },
    } as unknown as RunResult['stages'][number]);
    const s = timeSummary('compare', result, records);
    const b = s.commands[1]!;
    assert.equal(b.verdict, 'undecided');
    assert.doesNotMatch(b.why, /reaches both 1|1\.00x/);
    assert.match(b.why, /the CI \[0\.93x, 0\.996x\] lies below 1 but reaches inside the noise band \+\/-2\.0%/);
    // The half-width and the estimate give the rounds that would decide: 20 * (h / (ln 0.98 - ln 0.962))^2.
    const h = (Math.log(0.9955) - Math.log(0.93)) / 2;
    const total = Math.ceil(20 * (h / (Math.log(0.98) - Math.log(0.962))) ** 2);
    assert.match(b.why, new RegExp(`about ${total - 20} more rounds to call \\(--runs ${total}\\)`));
    assert.match(
      b.why,
      /the smallest difference these 20 rounds could call is a speed-up below 0\.9\d+x or above 1\.0\d+x/,
    );
  });
});
