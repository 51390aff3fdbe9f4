// The before/after chart: each shared metric's ratio after/before with its CI, for throughput and for
// peak memory, with the noise band and a rule at 1.
import type { BeforeAfter } from '../../analysis/compare-runs.js';
import { ratioLayers, ratioRows } from './ratio.js';
import { base, type Chart } from './spec.js';

export function beforeAfterChart(cmp: BeforeAfter): Chart {
  const rows = cmp.metrics.flatMap((m) =>
    ratioRows('metric', m.metric, m.throughput_ratio, m.verdict, m.memory_ratio, m.memory_verdict),
  );
  return {
    name: 'before-after',
    title: 'after / before, per shared metric',
    spec: {
      ...base(
        `after / before: ${cmp.after.run_id} vs ${cmp.before.run_id}`,
        `Ratios with 95% bootstrap CIs; grey band: +/-${(cmp.noise_band * 100).toFixed(1)}% noise band.`,
      ),
      width: 420,
      // A height per metric needs a metric to step over: with no ratio (too few rounds for a CI) the band alone.
      height: rows.length > 0 ? { step: 26 } : 60,
      layer: ratioLayers(rows, { field: 'metric' }, 'after / before', cmp.noise_band),
    },
  };
}
