// Statistical validation of the compare and claim strategies on a workload with exactly known work
// (experiments/workloads/known_work.mjs): real processes, real timing noise, run through the shipped
// code paths (runCompare for the compare stage, runClaimPairs for the claim stage).
// Targets: A/A false "faster"/"slower" verdicts <= 5% over >= 40 comparisons; a planted 10% slowdown
// detected in >= 90% of >= 20 comparisons within the default budget; a planted 2.5x speedup
// confirms "2-3x", falls short of "5-10x" and exceeds "1.5-2x".
import { join } from 'node:path';
import { runClaimPairs, type ClaimLoopResult } from '../../harness/search/claim.js';
import { runCompare, type CompareArm } from '../../harness/search/compare.js';
import type { ArmTrial, ArmTrialFn } from '../../harness/search/sweep.js';
import { parseClaim } from '../../harness/stats/claim.js';
import { ratioThroughput } from '../../harness/stats/throughput.js';
import { runTrial } from '../../harness/trial/run-trial.js';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import { ROOT, tempDir } from '../support/paths.js';
import { writeSection } from './results.js';
import type { ClaimVerdict, Config, Role } from '../../harness/domain/index.js';

const AA_COMPARISONS = Number(process.env['AA'] ?? 40);
const SLOW_COMPARISONS = Number(process.env['SLOW'] ?? 20);
/** The compare stage's defaults: 5 rounds before the first look, at most 20, a 2% noise band. */
const COMPARE = { minRounds: 5, maxRounds: 20, noiseBand: 0.02 };
/** The claim stage's defaults. */
const CLAIM = { minPairs: 5, maxPairs: 20, noiseBand: 0.01 };

const workload = new CommandWorkload(
  {
    kind: 'command',
    command: ['node', join(ROOT, 'experiments', 'workloads', 'known_work.mjs')],
    protocol: 'required',
    params: { batch_size: 1 },
  },
  ROOT,
);
const scratch = tempDir('tunebench-bench-');
let index = 0;
let trials = 0;

async function trial(config: Config, role: Role): Promise<ArmTrial> {
  trials += 1;
  const r = await runTrial(
    { workload, limits: { mechanism: 'none', timeout: 60 }, scratchDir: scratch },
    { index: index++, stage: 'bench', role, config, measure: { warmupSteps: 3, steps: 12 } },
  );
  return { outcome: r.outcome, reason: r.reason, steps: r.steps, wallSeconds: r.wall_seconds };
}

/** Baseline `a` against arm `b` through the compare strategy; the arm's outcome. */
async function compare(a: Config, b: Config): Promise<{ arm: CompareArm; rounds: number }> {
  const run: ArmTrialFn = (config, o) => trial(config, { kind: o.role, round: o.round + 1 });
  const r = await runCompare(run, {
    arms: [a, b],
    baseline: 0,
    keyOf: (c) => JSON.stringify(c),
    ...COMPARE,
    budget: {},
  });
  const arm = r.arms[1]!;
  return { arm, rounds: arm.decidedAt ?? r.rounds };
}

/** A planted 2.5x speedup (the baseline does 2.5 times the candidate's work) against a claim. */
async function claim(text: string): Promise<ClaimLoopResult> {
  return runClaimPairs(
    async (side, pair) => {
      const t = await trial(side === 'baseline' ? { work: 2.5 } : { work: 1 }, { kind: side, pair: pair + 1 });
      return t.outcome === 'ok' ? ratioThroughput(t.steps) : null;
    },
    { claim: parseClaim(text), effectOf: (b, c) => c / b, ...CLAIM },
  );
}

const ratio = (arm: CompareArm) =>
  arm.ratio ? `${arm.ratio.estimate.toFixed(4)} [${arm.ratio.low.toFixed(4)}, ${arm.ratio.high.toFixed(4)}]` : '-';
const effect = (r: ClaimLoopResult) =>
  r.effect ? `${r.effect.estimate.toFixed(2)}x [${r.effect.low.toFixed(2)}, ${r.effect.high.toFixed(2)}]` : 'no CI';

async function main(): Promise<void> {
  const started = Date.now();
  let falsePositives = 0;
  let aaEquivalent = 0;
  const aaRounds: number[] = [];
  for (let i = 0; i < AA_COMPARISONS; i++) {
    const { arm, rounds } = await compare({ work: 1, label: 'a' }, { work: 1, label: 'b' });
    if (arm.decision === 'faster' || arm.decision === 'slower') falsePositives += 1;
    if (arm.decision === 'equivalent') aaEquivalent += 1;
    aaRounds.push(rounds);
    process.stderr.write(`A/A ${i + 1}/${AA_COMPARISONS}: ${arm.decision} after ${rounds} rounds ${ratio(arm)}\n`);
  }
  let detected = 0;
  const slowRounds: number[] = [];
  for (let i = 0; i < SLOW_COMPARISONS; i++) {
    const { arm, rounds } = await compare({ work: 1 }, { work: 1.1 });
    if (arm.decision === 'slower') detected += 1;
    slowRounds.push(rounds);
    process.stderr.write(
      `10% slower ${i + 1}/${SLOW_COMPARISONS}: ${arm.decision} after ${rounds} rounds ${ratio(arm)}\n`,
    );
  }
  const claims: { text: string; expected: ClaimVerdict; r: ClaimLoopResult }[] = [];
  for (const [text, expected] of [
    ['2-3x', 'confirmed'],
    ['5-10x', 'falls short'],
    ['1.5-2x', 'exceeds'],
  ] as const) {
    const r = await claim(text);
    claims.push({ text, expected, r });
    process.stderr.write(`2.5x vs "${text}": ${r.verdict} after ${r.pairs} pairs (${r.stoppedBy}) ${effect(r)}\n`);
  }
  const median = (v: number[]) => [...v].sort((x, y) => x - y)[v.length >> 1]!;
  const fpRate = falsePositives / AA_COMPARISONS;
  const power = detected / SLOW_COMPARISONS;
  const minutes = ((Date.now() - started) / 60000).toFixed(1);
  const pass = (ok: boolean) => (ok ? 'pass' : '**FAIL**');
  const md = [
    '## Claim statistics: validation on known work',
    '',
    `Command: \`npm run bench:claims\` (${trials} trials of \`experiments/workloads/known_work.mjs\`, ${minutes} ` +
      `minutes). Comparisons run through \`runCompare\` (the compare stage's strategy): baseline and arm in rounds ` +
      `whose order reverses every round, each arm paired with the baseline's trial of the same round, looks at ` +
      `the planned rounds from ${COMPARE.minRounds} to ${COMPARE.maxRounds} with alpha 0.05 spent over the looks; ` +
      '"faster"/"slower" needs the repeated 95% CI of the throughput ratio ' +
      `outside 1 +/- ${COMPARE.noiseBand * 100}%, "equivalent" needs it inside. ` +
      `Claims run through \`runClaimPairs\` (the claim stage's strategy): interleaved pairs from ${CLAIM.minPairs} ` +
      `to ${CLAIM.maxPairs}, judged at the planned looks with a noise band of ${CLAIM.noiseBand * 100}%.`,
    '',
    '| check | target | measured | |',
    '| --- | --- | --- | --- |',
    '| A/A: the same work against itself | false "faster"/"slower" <= 5% over >= 40 comparisons ' +
      `| ${falsePositives}/${AA_COMPARISONS} = ${(fpRate * 100).toFixed(1)}% (${aaEquivalent} equivalent; ` +
      `median ${median(aaRounds)} rounds) | ${pass(fpRate <= 0.05 && AA_COMPARISONS >= 40)} |`,
    '| planted 10% slowdown (work 1.1) | "slower" in >= 90% of >= 20 comparisons ' +
      `| ${detected}/${SLOW_COMPARISONS} = ${(power * 100).toFixed(0)}% (median ${median(slowRounds)} rounds) ` +
      `| ${pass(power >= 0.9 && SLOW_COMPARISONS >= 20)} |`,
    ...claims.map(
      ({ text, expected, r }) =>
        `| planted 2.5x speedup vs "${text}" | ${expected} ` +
        `| ${r.verdict}: ${effect(r)} after ${r.pairs} pairs | ${pass(r.verdict === expected)} |`,
    ),
  ].join('\n');
  writeSection('claims', md);
  process.stdout.write(`${md}\n`);
}

await main();
