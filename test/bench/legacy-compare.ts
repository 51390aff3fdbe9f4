// The previous code's verdicts (test/bench/legacy/, frozen at 2aed9d5) on the same simulated
// machines as the calibration suite, so that old and new are measured side by side in one run.
import { NOISE_GRID, SimMachine } from '../support/noise-sim.js';
import { legacyClaimLoop, legacyCompare, runSweep as legacySweep } from './legacy/index.js';

const LEGACY_REPS = Number(process.env['LEGACY_REPS'] ?? 200);
/** Resamples per bootstrap CI in the old code (10,000 there); fewer keep the simulation short. */
const RESAMPLES = 1000;
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export async function legacyRows(): Promise<string[]> {
  const lines = ['### The previous code (2aed9d5) on the same machines', ''];
  lines.push(
    `${LEGACY_REPS} replications per cell, ${RESAMPLES} bootstrap resamples per CI; compare: 5 fixed rounds, ` +
      'Mann-Whitney and CI outside the 2% band; claims: looks after every pair from 5 to 20, tolerance 0.1; ' +
      'race: brief first round (3 steps), 3 rounds.',
    '',
    '| noise | A/A compare: wrong faster/slower | A/A "5% faster" confirmed ' +
      '| "5% faster" confirmed at a real 3% slowdown | A/A claim CI coverage |',
    '| --- | --- | --- | --- | --- |',
  );
  for (const [g, noise] of NOISE_GRID.entries()) {
    let wrong = 0;
    let aaConfirmed = 0;
    let slowConfirmed = 0;
    let covered = 0;
    let withCi = 0;
    for (let r = 0; r < LEGACY_REPS; r++) {
      const seed = 50_000 * (g + 1) + r;
      const m1 = new SimMachine(noise, seed, 10);
      const c = await legacyCompare(async () => m1.trialSteps(1000), {
        rounds: 5,
        band: 0.02,
        resamples: RESAMPLES,
        seed: r + 1,
      });
      if (c.verdict !== 'no significant difference') wrong += 1;
      const m2 = new SimMachine(noise, seed + 1, 40);
      const aa = await legacyClaimLoop('5% faster', async () => m2.trialSteps(1000), {
        resamples: RESAMPLES,
        seed: r + 1,
      });
      if (aa.verdict === 'confirmed') aaConfirmed += 1;
      if (aa.speedup) {
        withCi += 1;
        if (aa.speedup.low <= 1 && 1 <= aa.speedup.high) covered += 1;
      }
      const m3 = new SimMachine(noise, seed + 2, 40);
      const slow = await legacyClaimLoop('5% faster', async (side) => m3.trialSteps(side === 'a' ? 1000 : 970), {
        resamples: RESAMPLES,
        seed: r + 1,
      });
      if (slow.verdict === 'confirmed') slowConfirmed += 1;
    }
    lines.push(
      `| ${noise.name} | ${pct(wrong / LEGACY_REPS)} | ${pct(aaConfirmed / LEGACY_REPS)} ` +
        `| ${pct(slowConfirmed / LEGACY_REPS)} | ${pct(covered / withCi)} |`,
    );
    process.stderr.write(`legacy ${noise.name}: done\n`);
  }
  const noise = NOISE_GRID[1]!;
  lines.push(
    '',
    `Old race on "${noise.name}", 6 configs:`,
    '',
    '| configs | true best eliminated | configs eliminated (mean) | "significantly better than every other" printed |',
    '| --- | --- | --- | --- |',
  );
  for (const [name, rates] of [
    ['best +5%', [1.05, 1, 1, 1, 1, 1]],
    ['six identical', [1, 1, 1, 1, 1, 1]],
  ] as const) {
    let bestGone = 0;
    let gone = 0;
    let significant = 0;
    for (let r = 0; r < LEGACY_REPS; r++) {
      const m = new SimMachine(noise, 80_000 + r, 20, 10);
      const out = await legacySweep(
        async (config, o) => {
          const steps = m.trialSteps(1000 * rates[Number(config['arm'])]!).slice(0, o.steps ?? 10);
          return { outcome: 'ok', reason: 'ok', steps, wallSeconds: steps.reduce((a, s) => a + s.seconds, 0) + 0.5 };
        },
        {
          strategy: 'race',
          configs: rates.map((_, i) => ({ arm: i })),
          keyOf: (c) => String(c['arm']),
          repeats: 3,
          budget: {},
          costOrder: ['arm'],
          seed: r + 1,
          briefSteps: 3,
        },
      );
      const eliminated = out.arms.filter((a) => a.status === 'eliminated');
      gone += eliminated.length;
      if (eliminated.some((a) => a.config['arm'] === 0)) bestGone += 1;
      if (/significantly better than every other/.test(out.notes.join('\n'))) significant += 1;
    }
    lines.push(
      `| ${name} | ${name === 'best +5%' ? pct(bestGone / LEGACY_REPS) : '-'} ` +
        `| ${(gone / LEGACY_REPS).toFixed(2)} of 5 | ${pct(significant / LEGACY_REPS)} |`,
    );
  }
  return lines;
}
