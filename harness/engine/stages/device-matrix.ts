// The configuration matrix per device class: on a heterogeneous cluster a sweep's trials land on
// different GPU types, and each class gets its own chosen config, ranked on its own trials only
// (the table ML teams otherwise keep by hand).
import { rankIndependent } from '../../search/rank.js';
import { ratioThroughput } from '../../stats/throughput.js';
import type { Config, DeviceChoice, TrialRecord } from '../../domain/index.js';

/** One row per device class among the records that carry a node (they ran in SLURM jobs). */
export function deviceMatrix(
  records: readonly TrialRecord[],
  keyOf: (c: Config) => string,
  costOrder: readonly string[],
): DeviceChoice[] {
  const byDevice = new Map<string, TrialRecord[]>();
  for (const r of records) if (r.node) byDevice.set(r.node.device, [...(byDevice.get(r.node.device) ?? []), r]);
  return [...byDevice]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([device, rs]) => {
      const byConfig = new Map<string, { config: Config; steps: TrialRecord['steps'][] }>();
      // A config that failed a trial here (an OOM at the chosen batch) is no contender: never a tie.
      const failed = new Set(rs.filter((x) => x.outcome !== 'ok').map((x) => keyOf(x.config)));
      for (const r of rs.filter((x) => x.outcome === 'ok' && x.steps.length > 0 && !failed.has(keyOf(x.config)))) {
        const key = keyOf(r.config);
        const g = byConfig.get(key) ?? { config: r.config, steps: [] };
        g.steps.push(r.steps);
        byConfig.set(key, g);
      }
      const ranking = rankIndependent(
        [...byConfig].map(([key, g]) => ({
          key,
          config: g.config,
          rates: g.steps.map((s) => ratioThroughput(s)).filter((r): r is number => r !== null && r > 0),
        })),
        costOrder,
      );
      const chosen = ranking.chosen;
      return {
        device,
        hosts: [...new Set(rs.map((r) => r.node!.host))].sort(),
        chosen_key: chosen?.key ?? null,
        config: chosen?.config ?? null,
        throughput: chosen?.ci ?? null,
        trials: rs.length,
        note: ranking.note ?? null,
      };
    });
}
