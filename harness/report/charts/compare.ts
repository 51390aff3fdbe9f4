// The compare chart: each arm's median throughput with its CI, its ratio to the baseline with its CI
// and a rule at 1, and the same for peak memory.
import { ratioLayers, ratioRows } from './ratio.js';
import { base, MIB, round, slug, type Chart } from './spec.js';
import type { CompareSummary } from '../../domain/index.js';

export function compareChart(stage: string, r: CompareSummary): Chart {
  const arms = r.arms.map((a) => ({
    arm: String(a.value),
    verdict: a.verdict,
    memory_verdict: a.memory_verdict,
    samples_per_second: round(a.throughput?.estimate),
    low: round(a.throughput?.low),
    high: round(a.throughput?.high),
    memory_mib: round(a.peak_memory ? a.peak_memory.estimate / MIB : null),
    memory_low: round(a.peak_memory ? a.peak_memory.low / MIB : null),
    memory_high: round(a.peak_memory ? a.peak_memory.high / MIB : null),
  }));
  const ratios = r.arms
    .filter((a) => !a.baseline)
    .flatMap((a) => ratioRows('arm', String(a.value), a.throughput_ratio, a.verdict, a.memory_ratio, a.memory_verdict));
  const order = arms.map((a) => a.arm);
  const y = { field: 'arm', type: 'nominal', sort: order, title: r.param };
  const ciPanel = (field: string, low: string, high: string, title: string) => ({
    width: 220,
    height: { step: 22 },
    data: { values: arms.filter((a) => (a as Record<string, unknown>)[field] !== null) },
    encoding: { y },
    layer: [
      {
        mark: 'rule',
        encoding: { x: { field: low, type: 'quantitative', title, scale: { zero: false } }, x2: { field: high } },
      },
      {
        mark: { type: 'point', filled: true, size: 60 },
        encoding: {
          // The title here too: the CI layer is left out when no arm has a CI (charts/prune.ts).
          x: { field, type: 'quantitative', title, scale: { zero: false } },
          tooltip: [{ field: 'arm' }, { field }, { field: low }, { field: high }],
        },
      },
    ],
  });
  const ratioPanel = {
    width: 260,
    height: { step: 22 },
    layer: ratioLayers(ratios, { field: 'arm', sort: order }, `ratio to ${String(r.baseline)}`, r.noise_band),
  };
  return {
    name: `compare-${slug(stage)}`,
    title: `${stage}: ${r.param} compared`,
    spec: {
      ...base(
        `${stage}: ${r.param} arms, medians with 95% CIs, and ratios to ${String(r.baseline)}`,
        `Grey band: the +/-${(r.noise_band * 100).toFixed(1)}% noise band around 1.`,
      ),
      hconcat: [
        ciPanel('samples_per_second', 'low', 'high', 'samples/s (geometric mean)'),
        ciPanel('memory_mib', 'memory_low', 'memory_high', 'peak memory (MiB, geometric mean)'),
        // No ratio (no arm measured beside the baseline): the panel would hold the band alone.
        ...(ratios.length > 0 ? [ratioPanel] : []),
      ],
    },
  };
}
