// Statistical validation of the claim and change statistics on a workload with exactly known work
// (experiments/workloads/known_work.mjs): real processes, real timing noise.
// Targets: A/A false "significant" verdicts <= 5% over >= 40 comparisons; a planted 10% slowdown
// detected in >= 90% of >= 20 comparisons within the default budget; a planted 2.5x speedup
// confirms "2-3x" and refutes "5-10x".
import { join } from 'node:path';
import { adaptivePairs } from '../../harness/search/adaptive.js';
import { judgeClaim, parseClaim } from '../../harness/stats/claim.js';
import { medianRateRatioInterval } from '../../harness/stats/throughput.js';
import { runTrial } from '../../harness/trial/run-trial.js';
import type { Config, StepSample } from '../../harness/trial/record.js';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import { ROOT, tempDir } from '../support/paths.js';
import { writeSection } from './results.js';

const AA_COMPARISONS = Number(process.env['AA'] ?? 40);
const SLOW_COMPARISONS = Number(process.env['SLOW'] ?? 20);
const DEFAULT_BUDGET = { minPairs: 5, maxPairs: 20 };

const workload = new CommandWorkload({ kind: 'command', command: ['node', join(ROOT, 'experiments', 'workloads', 'known_work.mjs')], protocol: 'required', params: { batch_size: 1 } }, ROOT);
const scratch = tempDir('tunebench-bench-');
let index = 0;
let trials = 0;

async function trial(config: Config): Promise<StepSample[] | null> {
  trials += 1;
  const r = await runTrial({ workload, limits: { mechanism: 'none', timeout: 60 }, scratchDir: scratch }, { index: index++, stage: 'bench', role: 'pair', config, measure: { warmupSteps: 3, steps: 12 } });
  return r.outcome === 'ok' ? r.steps : null;
}

async function compare(a: Config, b: Config, seed: number) {
  return adaptivePairs((side) => trial(side === 'a' ? a : b), { ...DEFAULT_BUDGET, seed });
}

async function main(): Promise<void> {
  const started = Date.now();
  let falsePositives = 0;
  const aaPairs: number[] = [];
  for (let i = 0; i < AA_COMPARISONS; i++) {
    const r = await compare({ work: 1, label: 'a' }, { work: 1, label: 'b' }, i + 1);
    if (r.decision.direction !== 'same') falsePositives += 1;
    aaPairs.push(r.pairs);
    process.stderr.write(`A/A ${i + 1}/${AA_COMPARISONS}: ${r.decision.direction} after ${r.pairs} pairs (${r.stoppedBy}) ${r.ratio ? r.ratio.estimate.toFixed(4) : '-'}\n`);
  }
  let detected = 0;
  const slowPairs: number[] = [];
  for (let i = 0; i < SLOW_COMPARISONS; i++) {
    const r = await compare({ work: 1 }, { work: 1.1 }, 1000 + i);
    if (r.decision.direction === 'lower') detected += 1;
    slowPairs.push(r.pairs);
    process.stderr.write(`10% slower ${i + 1}/${SLOW_COMPARISONS}: ${r.decision.direction} after ${r.pairs} pairs (${r.stoppedBy}) ${r.ratio ? r.ratio.estimate.toFixed(4) : '-'}\n`);
  }
  // A planted 2.5x speedup: baseline does 2.5 times the candidate's work. Ten pairs, interleaved.
  const base: StepSample[][] = [];
  const cand: StepSample[][] = [];
  for (let i = 0; i < 10; i++) {
    for (const side of i % 2 ? ['c', 'b'] : ['b', 'c']) {
      const s = await trial(side === 'b' ? { work: 2.5 } : { work: 1 });
      if (s) (side === 'b' ? base : cand).push(s);
    }
  }
  const speedup = medianRateRatioInterval(base, cand, { seed: 7 })!;
  const within = judgeClaim(parseClaim('2-3x'), speedup);
  const beyond = judgeClaim(parseClaim('5-10x'), speedup);
  const median = (v: number[]) => [...v].sort((x, y) => x - y)[v.length >> 1]!;
  const fpRate = falsePositives / AA_COMPARISONS;
  const power = detected / SLOW_COMPARISONS;
  const minutes = ((Date.now() - started) / 60000).toFixed(1);
  const pass = (ok: boolean) => (ok ? 'pass' : '**FAIL**');
  const md = [
    '## Claim statistics: validation on known work',
    '',
    `Command: \`npm run bench:claims\` (${trials} trials of \`experiments/workloads/known_work.mjs\`, ${minutes} minutes). Each comparison adds interleaved pairs (A B, B A, ...) from ${DEFAULT_BUDGET.minPairs} up to ${DEFAULT_BUDGET.maxPairs} until the two-gate decision (Mann-Whitney p < 0.05 and the 95% CI of the throughput ratio outside +/-1%) calls a change, the CI fits inside the band, or the budget ends.`,
    '',
    '| check | target | measured | |',
    '| --- | --- | --- | --- |',
    `| A/A: the same work against itself | false "significant" <= 5% over >= 40 comparisons | ${falsePositives}/${AA_COMPARISONS} = ${(fpRate * 100).toFixed(1)}% (median ${median(aaPairs)} pairs) | ${pass(fpRate <= 0.05 && AA_COMPARISONS >= 40)} |`,
    `| planted 10% slowdown (work 1.1) | detected in >= 90% of >= 20 comparisons | ${detected}/${SLOW_COMPARISONS} = ${(power * 100).toFixed(0)}% (median ${median(slowPairs)} pairs) | ${pass(power >= 0.9 && SLOW_COMPARISONS >= 20)} |`,
    `| planted 2.5x speedup vs "2-3x" | confirmed | ${within.verdict}: ${speedup.estimate.toFixed(2)}x [${speedup.low.toFixed(2)}, ${speedup.high.toFixed(2)}] | ${pass(within.verdict === 'confirmed')} |`,
    `| the same data vs "5-10x" | refuted | ${beyond.verdict} | ${pass(beyond.verdict === 'refuted')} |`,
  ].join('\n');
  writeSection('claims', md);
  process.stdout.write(`${md}\n`);
}

await main();
