// Seeded simulation through the frozen 2aed9d5 verdict code (this folder) that reproduces the measured problems.
// Run: npx tsc -p test/bench/legacy/tsconfig.json && ln -sfn "$PWD/node_modules" /tmp/legacy-build/node_modules && node /tmp/legacy-build/test/bench/legacy/repro.js
// Optional: REPRO_SCALE=0.25 (fewer repetitions) for a quick look.
import {
  adaptivePairs,
  createRng,
  legacyClaimLoop,
  mannWhitney,
  parseClaim,
  runSweep,
  type ArmTrialFn,
  type Config,
  type StepSample,
} from './index.js';

const SCALE = Number(process.env.REPRO_SCALE ?? '1');
const REPS = Math.max(10, Math.round(400 * SCALE));
const RACE_REPS = Math.max(10, Math.round(200 * SCALE));
const RESAMPLES = 2000;
const SAMPLES_PER_STEP = 32;
const BASE_RATE = 1000; // samples/s

interface Noise {
  /** Lognormal sigma of a per-trial throughput factor (between-trial noise). */
  trial: number;
  /** Lognormal sigma of a per-step time factor. */
  step: number;
}

function gaussian(rng: () => number): () => number {
  return () => {
    const u = 1 - rng(); // (0, 1]
    const v = rng();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
}

/** One trial's steps at a true throughput `rate`, with lognormal trial and step noise. */
function simulateTrial(z: () => number, rate: number, steps: number, noise: Noise): StepSample[] {
  const trialFactor = Math.exp(noise.trial * z());
  const out: StepSample[] = [];
  for (let s = 0; s < steps; s++) {
    const seconds = (SAMPLES_PER_STEP / rate) * trialFactor * Math.exp(noise.step * z());
    out.push({ samples: SAMPLES_PER_STEP, seconds });
  }
  return out;
}

const pct = (k: number, n: number) => `${((100 * k) / n).toFixed(1)}% (${k}/${n})`;
const log = (s: string) => process.stdout.write(`${s}\n`);
const progress = (s: string) => process.stderr.write(`  .. ${s}\n`);

const CLAIM_NOISE: Noise = { trial: 0.03, step: 0.05 };

async function claimRate(
  candidateRate: number,
  seedBase: number,
): Promise<{ confirmed: number; refuted: number; meanPairs: number }> {
  let confirmed = 0;
  let refuted = 0;
  let pairs = 0;
  for (let rep = 0; rep < REPS; rep++) {
    const z = gaussian(createRng(seedBase + rep));
    const r = await legacyClaimLoop(
      '5% faster',
      async (side) => simulateTrial(z, side === 'a' ? BASE_RATE : BASE_RATE * candidateRate, 10, CLAIM_NOISE),
      { tolerance: 0.1, minPairs: 5, maxPairs: 20, resamples: RESAMPLES },
    );
    if (r.verdict === 'confirmed') confirmed++;
    if (r.verdict === 'refuted') refuted++;
    pairs += r.pairs;
  }
  return { confirmed, refuted, meanPairs: pairs / REPS };
}

async function raceOnce(rates: readonly number[], noise: Noise, seed: number) {
  const z = gaussian(createRng(seed));
  const configs: Config[] = rates.map((_, i) => ({ id: i }));
  const run: ArmTrialFn = async (config, o) => {
    const steps = simulateTrial(z, rates[Number(config.id)]!, o.steps ?? 10, noise);
    return { outcome: 'ok', reason: '', steps, wallSeconds: steps.reduce((a, s) => a + s.seconds, 0) };
  };
  return runSweep(run, {
    strategy: 'race',
    configs,
    keyOf: (c) => `id=${String(c.id)}`,
    repeats: 3,
    budget: {},
    costOrder: ['id'],
    seed: 1,
    briefSteps: 3,
  });
}

async function race(noise: Noise, label: string, seedBase: number): Promise<void> {
  // The best config (index 5, the most expensive in cost order) is 2.5% ahead of five equal ones.
  const ahead = [1, 1, 1, 1, 1, 1.025].map((r) => r * BASE_RATE);
  let bestEliminated = 0;
  let bestChosen = 0;
  for (let rep = 0; rep < RACE_REPS; rep++) {
    const r = await raceOnce(ahead, noise, seedBase + rep);
    if (r.arms[5]!.status === 'eliminated') bestEliminated++;
    if (r.ranking.chosen?.key === 'id=5') bestChosen++;
  }
  const same = Array.from({ length: 6 }, () => BASE_RATE);
  let eliminated = 0;
  let significant = 0;
  for (let rep = 0; rep < RACE_REPS; rep++) {
    const r = await raceOnce(same, noise, seedBase + 100_000 + rep);
    eliminated += r.arms.filter((a) => a.status === 'eliminated').length;
    if (r.notes.some((n) => n.includes('significantly better than every other'))) significant++;
  }
  log(`    noise ${label}:`);
  log(
    `      best (+2.5%) eliminated: ${pct(bestEliminated, RACE_REPS)}   [issue: ~50%]   (best chosen: ${pct(bestChosen, RACE_REPS)})`,
  );
  log(
    `      6 identical: mean eliminated ${(eliminated / RACE_REPS).toFixed(2)} of 5   [issue: 4.65]; note "significantly better than every other": ${pct(significant, RACE_REPS)}`,
  );
}

async function adaptiveAA(maxPairs: number, seedBase: number): Promise<number> {
  let changed = 0;
  for (let rep = 0; rep < REPS; rep++) {
    const z = gaussian(createRng(seedBase + rep));
    const r = await adaptivePairs(async () => simulateTrial(z, BASE_RATE, 10, CLAIM_NOISE), {
      band: 0,
      minPairs: 5,
      maxPairs,
      resamples: RESAMPLES,
    });
    if (r.decision.direction !== 'same') changed++;
  }
  return changed;
}

async function main(): Promise<void> {
  const t0 = Date.now();
  log(
    `Legacy (2aed9d5) verdict code, seeded simulation: ${REPS} reps for claims/adaptive (bootstrap resamples ${RESAMPLES}), ${RACE_REPS} reps per race scenario.`,
  );
  log(
    `Trials: 10 steps of ${SAMPLES_PER_STEP} samples at ${BASE_RATE} samples/s; lognormal trial noise sigma and step noise sigma as stated.`,
  );

  log('');
  log(
    '(a) claim "5% faster" (tolerance 0.1 -> band 0.955x..1.155x), 3% trial + 5% step noise, min_pairs 5, max_pairs 20:',
  );
  progress('claims A/A');
  const aa = await claimRate(1, 1_000_000);
  log(
    `    A/A (true speedup 1.00): confirmed ${pct(aa.confirmed, REPS)}   [issue: ~97%]; refuted ${pct(aa.refuted, REPS)}; mean pairs ${aa.meanPairs.toFixed(1)}`,
  );
  progress('claims 3% slowdown');
  const slow = await claimRate(0.97, 2_000_000);
  log(
    `    real 3% slowdown (0.97): confirmed ${pct(slow.confirmed, REPS)}   [issue: ~30%]; refuted ${pct(slow.refuted, REPS)}; mean pairs ${slow.meanPairs.toFixed(1)}`,
  );

  log('');
  const mem = parseClaim('2x more memory');
  log(
    `(b) parseClaim('2x more memory') = ${JSON.stringify({ low: mem.low, high: mem.high, oneSided: mem.oneSided })}: a speedup band around 2x (accepted as "more" = faster)`,
  );

  log('');
  log('(c) race: 6 configs, repeats 3, briefSteps 3, steps 10, seed 1:');
  progress('race, 3% trial + 3% step noise');
  await race({ trial: 0.03, step: 0.03 }, '3% trial + 3% step (the issue\'s "3% noise")', 3_000_000);
  progress('race, 3% trial noise only');
  await race({ trial: 0.03, step: 0 }, '3% trial, no step noise', 4_000_000);
  progress('race, 3% trial + 5% step noise');
  await race({ trial: 0.03, step: 0.05 }, '3% trial + 5% step (as in (a))', 5_000_000);

  log('');
  log('(d) adaptivePairs A/A, band 0, 3% trial + 5% step noise (interim resamples 2000):');
  progress('adaptive 5..20');
  const seq = await adaptiveAA(20, 6_000_000);
  progress('adaptive fixed 5');
  const fixed = await adaptiveAA(5, 6_000_000);
  log(`    minPairs 5, maxPairs 20 (looks after every pair): change called ${pct(seq, REPS)}   [issue: 7.6%]`);
  log(`    fixed 5 pairs (one look):                        change called ${pct(fixed, REPS)}   [issue: 1.2%]`);

  log('');
  const mw = mannWhitney([1, 1, 1], [2, 2, 2]);
  log(
    `(e) mannWhitney([1,1,1],[2,2,2]) = p ${mw.p.toFixed(4)} (${mw.method}, U ${mw.u})   [issue: 0.047; exact permutation p = 2/20 = 0.10]`,
  );
  log('');
  log(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

await main();
