// Ranking vocabulary shared by sweeps and the per-device matrix, and the cost order that breaks ties.
import { pairCount } from '../stats/blocked.js';
import { logMeanInterval, MIN_TRIALS_FOR_CI, welchRatioInterval } from '../stats/log-ratio.js';
import type { Config, Interval } from '../domain/index.js';

export interface Arm {
  key: string;
  config: Config;
  ci: Interval | null;
}

export interface Ranking {
  /** Arms with a CI, best estimate first. */
  order: Arm[];
  leader: Arm | undefined;
  /** Arms not significantly slower than the leader, leader included. */
  tied: Arm[];
  /** The cheapest of the tied arms. */
  chosen: Arm | undefined;
  note: string | undefined;
}

/**
 * Compares by cost: the parameters in `costOrder` are compared in turn, smaller is cheaper
 * (fewer workers, less prefetch memory, fewer threads); false < true for booleans.
 */
export function cheaper(a: Config, b: Config, costOrder: readonly string[]): number {
  for (const p of costOrder) {
    const x = a[p];
    const y = b[p];
    if (x === y) continue;
    // A parameter that does not apply (left out of the config) costs nothing.
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1;
    const nx = typeof x === 'boolean' ? Number(x) : x;
    const ny = typeof y === 'boolean' ? Number(y) : y;
    if (typeof nx === 'number' && typeof ny === 'number') return nx - ny;
    return String(nx).localeCompare(String(ny));
  }
  return 0;
}

/**
 * Ranks configs measured in independent trials (not in rounds: say, on the nodes of one device
 * class): each config's geometric-mean throughput with a 95% CI (3 trials or more), and a config
 * ties with the leader unless Welch's test finds it slower, Bonferroni-corrected over all pairs.
 * A config with fewer than 3 trials cannot be told apart and counts as tied.
 */
export function rankIndependent(
  groups: readonly { key: string; config: Config; rates: readonly number[] }[],
  costOrder: readonly string[],
  alpha = 0.05,
): Ranking {
  // A rate that is not a positive finite number measured nothing; it must not lead.
  const measured = groups.map((g) => ({ ...g, rates: g.rates.filter((r) => Number.isFinite(r) && r > 0) }));
  const arms = measured
    .filter((g) => g.rates.length > 0)
    .map((g) => {
      const gm = Math.exp(g.rates.reduce((a, r) => a + Math.log(r), 0) / g.rates.length);
      return { key: g.key, config: g.config, ci: logMeanInterval(g.rates, alpha), rates: g.rates, gm };
    });
  const byEstimate = [...arms].sort((a, b) => b.gm - a.gm);
  const leader = byEstimate[0];
  const order = byEstimate.filter((a) => a.ci !== null).map(({ key, config, ci }) => ({ key, config, ci }));
  if (!leader) return { order, leader: undefined, tied: [], chosen: undefined, note: undefined };
  const perTest = alpha / pairCount(arms.length);
  const tiedFull = byEstimate.filter(
    (a) => a === leader || (welchRatioInterval(leader.rates, a.rates, 2 * perTest)?.high ?? 1) >= 1,
  );
  const tied = tiedFull.map(({ key, config, ci }) => ({ key, config, ci }));
  // A config with fewer than 3 trials ties for want of evidence, so it is not chosen on cost alone.
  const eligible = tiedFull
    .filter((a) => a === leader || a.rates.length >= MIN_TRIALS_FOR_CI)
    .map(({ key, config, ci }) => ({ key, config, ci }));
  const chosen = [...eligible].sort((a, b) => cheaper(a.config, b.config, costOrder))[0]!;
  const without = groups.length - 1;
  const note =
    arms.length === 1
      ? without === 0
        ? `${leader.key} is the only config that ran; there was nothing to compare it with`
        : `${leader.key} is the only config with a successful trial ` +
          `(${without === 1 ? '1 other had' : `${without} others had`} none)`
      : tied.length === 1
        ? `${leader.key} is significantly faster than every other config ` +
          `(Welch t tests, Bonferroni over ${pairCount(arms.length)} pairs)`
        : `${tied.length} configs are not significantly different from the best (${leader.key}); ` +
          `chose the cheapest, ${chosen.key}`;
  return { order, leader: tied.find((t) => t.key === leader.key), tied, chosen, note };
}
