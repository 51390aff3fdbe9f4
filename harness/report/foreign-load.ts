// The per-stage warning about foreign load: how many of a stage's trials ran while processes
// outside them used the CPU, how much, and what that does to the stage's comparisons.
import { isMaterial } from '../telemetry/foreign-load.js';
import { figure } from './format.js';
import type { ForeignLoad, TrialRecord } from '../domain/index.js';

/** Trials listed by index in the warning; the rest are counted. */
const LISTED = 12;

/** The stage's foreign load when trials had a material one, with their figures; else null. */
export function foreignLoadWarning(kind: string, records: readonly TrialRecord[]): string | null {
  const loaded = records.flatMap((r) => {
    const f = r.telemetry?.summary?.foreign_load;
    return f && finite(f) && isMaterial(f) ? [{ index: r.index, f }] : [];
  });
  if (loaded.length === 0) return null;
  const means = loaded.map((x) => x.f.mean);
  const low = Math.min(...means);
  const high = Math.max(...means);
  const share = Math.max(...loaded.map((x) => x.f.share));
  const cores = [...new Set(loaded.map((x) => x.f.available_cores))].sort((a, b) => a - b).join(' or ');
  const c = (v: number) => v.toFixed(2);
  const amount = low === high ? `${c(low)} cores` : `${c(low)} to ${c(high)} cores`;
  const shown = loaded
    .slice(0, LISTED)
    .map((x) => figure(x.index))
    .join(', ');
  const list = loaded.length > LISTED ? `${shown} and ${loaded.length - LISTED} more` : shown;
  const effect =
    kind === 'compare' || kind === 'claim'
      ? 'the comparison in this stage may be biased: interleaving the arms spreads the load over them, ' +
        'but it inflates the noise (wider intervals, later or no decisions) ' +
        'and a burst that hits one arm more than the other shifts the ratio'
      : 'the comparisons in this stage may be biased: ' +
        'a config measured under load looks slower than it is, and the load inflates the noise';
  return (
    `Foreign load: ${loaded.length} of ${records.length} trials (${list}) ran while processes outside the trial ` +
    `used ${amount} on average, up to ${Math.round(share * 100)}% of the ${cores} cores available to the job; ` +
    `${effect}. Rerun on an idle machine (or a dedicated allocation) to be sure.`
  );
}

function finite(f: ForeignLoad): boolean {
  return [f.mean, f.share, f.available_cores, f.busy_cores].every((v) => typeof v === 'number' && Number.isFinite(v));
}
