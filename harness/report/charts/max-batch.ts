// The max-batch chart: samples/s and peak memory against batch size (log axis), OOM probes marked
// where they failed, the cap as a rule, and max, recommended and fastest annotated.
import { base, MIB, round, slug, type Chart } from './spec.js';
import { roleText, type MaxBatchSummary, type TrialRecord } from '../../domain/index.js';

type Probe = ReturnType<typeof probeRows>[number];
/** A layer of the chart, drawn over the shared batch axis. */
type Layer = Record<string, unknown>;

export function maxBatchChart(stage: string, r: MaxBatchSummary, records: readonly TrialRecord[]): Chart {
  const probes = probeRows(r, records);
  const failed = probes
    .filter((p) => p.outcome !== 'ok')
    .map((p) => ({ batch: p.batch, trial: p.trial, outcome: p.outcome, role: p.role }));
  const x = { field: 'batch', type: 'quantitative', scale: { type: 'log', base: 2 }, title: r.param };
  // The same OOM layer goes into both panels.
  const ooms = oomLayer(failed);
  return {
    name: `max-batch-${slug(stage)}`,
    title: `${stage}: throughput and memory against ${r.param}`,
    spec: {
      ...base(
        `${stage}: throughput and peak memory against ${r.param}`,
        `Probes of the max-batch stage; red crosses are failed probes (${failed.length}).`,
      ),
      vconcat: [
        throughputPanel({ probes, x, ooms, answers: answerLayers(r) }),
        memoryPanel({
          memory: memoryRows(probes, limited(r)),
          x,
          caps: r.card_bytes !== undefined ? capLayers(r.card_bytes, 'card') : capLayers(r.cap_bytes, 'cap'),
          ooms,
        }),
      ],
      resolve: { scale: { x: 'shared' } },
    },
  };
}

/** One data row per probe, memory in MiB. */
function probeRows(r: MaxBatchSummary, records: readonly TrialRecord[]) {
  return records.map((t) => ({
    trial: t.index,
    batch: Number(t.config[r.param]),
    role: roleText(t.role),
    outcome: t.outcome,
    samples_per_second: round(t.samples_per_second),
    rss_mib: round(t.peak_rss_bytes === null ? null : t.peak_rss_bytes / MIB),
    capped_mib: round(t.peak_limited_bytes === null ? null : t.peak_limited_bytes / MIB),
    device_mib: round(t.peak_device_bytes == null ? null : t.peak_device_bytes / MIB),
  }));
}

/** What the limit limits: the card's memory, the capped quantity (a cgroup's tree, the address space), or none. */
type Limited = { field: 'device_mib' | 'capped_mib'; label: string } | null;

const CAPPED_LABEL: Record<string, string> = {
  'cgroup-v1': "peak of the trial's cgroup (what the cap limits)",
  'cgroup-v2': "peak of the trial's cgroup (what the cap limits)",
  'prlimit-as': 'peak address space (what the cap limits)',
};

function limited(r: MaxBatchSummary): Limited {
  if (r.card_bytes !== undefined) return { field: 'device_mib', label: 'peak device memory (what the card limits)' };
  if (r.cap_bytes === null || r.cap_mechanism === undefined || r.cap_mechanism === 'none') return null;
  return { field: 'capped_mib', label: CAPPED_LABEL[r.cap_mechanism] ?? 'peak of the capped quantity' };
}

/**
 * One point per probe: under a limit, the quantity it limits (drawn against its rule), with peak RSS in the
 * tooltip only (a tree's RSS counts shared pages once per process and may pass a cgroup cap that was never hit);
 * without one, peak RSS, and the capped quantity where it differs (runs before the summary said what was capped).
 */
function memoryRows(probes: readonly Probe[], by: Limited) {
  const row = (p: Probe, measure: string, mib: number) => ({
    batch: p.batch,
    trial: p.trial,
    outcome: p.outcome,
    measure,
    mib,
    rss_mib: p.rss_mib,
  });
  if (by !== null) return probes.flatMap((p) => (p[by.field] !== null ? [row(p, by.label, p[by.field]!)] : []));
  return probes.flatMap((p) => [
    ...(p.rss_mib !== null ? [row(p, 'peak RSS', p.rss_mib)] : []),
    ...(p.capped_mib !== null && p.capped_mib !== p.rss_mib
      ? [row(p, 'peak of the capped quantity', p.capped_mib)]
      : []),
  ]);
}

/** The stage's answers (max, recommended, fastest) as dashed rules with their labels stacked at the top. */
function answerLayers(r: MaxBatchSummary): Layer[] {
  const marks = [
    ['max', r.max],
    ['recommended', r.recommended],
    ['fastest', r.fastest],
  ]
    .filter((m): m is [string, number] => m[1] !== null)
    .map(([label, batch], i) => ({ label: `${label} ${batch}`, batch, ypx: 10 + 12 * i }));
  return [
    {
      data: { values: marks },
      mark: { type: 'rule', strokeDash: [4, 3], color: '#555' },
      encoding: { x: { field: 'batch', type: 'quantitative' } },
    },
    {
      data: { values: marks },
      mark: { type: 'text', align: 'left', dx: 3, baseline: 'middle', fontSize: 10, color: '#333' },
      encoding: {
        x: { field: 'batch', type: 'quantitative' },
        y: { field: 'ypx', type: 'quantitative', scale: null },
        text: { field: 'label' },
      },
    },
  ];
}

/** Failed probes as red crosses at the bottom of a panel. */
function oomLayer(failed: readonly object[]): Layer {
  return {
    data: { values: failed },
    mark: { type: 'point', shape: 'cross', size: 90, color: '#d62728', filled: true },
    encoding: {
      x: { field: 'batch', type: 'quantitative' },
      y: { value: 4 },
      tooltip: [{ field: 'trial' }, { field: 'batch' }, { field: 'outcome' }, { field: 'role' }],
    },
  };
}

function throughputPanel(opts: { probes: readonly Probe[]; x: object; ooms: Layer; answers: Layer[] }) {
  return {
    width: 520,
    height: 200,
    layer: [
      {
        data: { values: opts.probes.filter((p) => p.outcome === 'ok' && p.samples_per_second !== null) },
        mark: { type: 'point', filled: true, size: 50 },
        encoding: {
          x: opts.x,
          y: { field: 'samples_per_second', type: 'quantitative', title: 'samples/s' },
          tooltip: [
            { field: 'trial' },
            { field: 'batch' },
            { field: 'role' },
            { field: 'samples_per_second', title: 'samples/s' },
          ],
        },
      },
      opts.ooms,
      ...opts.answers,
    ],
  };
}

/** The memory cap as a red dashed rule with its label; none without a cap. */
function capLayers(capBytes: number | null, name: string): Layer[] {
  if (capBytes === null) return [];
  return [
    {
      data: { values: [{ cap_mib: round(capBytes / MIB), label: `${name} ${round(capBytes / MIB)} MiB` }] },
      layer: [
        {
          mark: { type: 'rule', color: '#d62728', strokeDash: [6, 3] },
          encoding: { y: { field: 'cap_mib', type: 'quantitative' } },
        },
        {
          mark: { type: 'text', align: 'left', dx: 4, dy: -4, color: '#d62728', fontSize: 10 },
          encoding: { x: { value: 0 }, y: { field: 'cap_mib', type: 'quantitative' }, text: { field: 'label' } },
        },
      ],
    },
  ];
}

function memoryPanel(opts: { memory: readonly object[]; x: object; caps: Layer[]; ooms: Layer }) {
  return {
    width: 520,
    height: 200,
    layer: [
      {
        data: { values: opts.memory },
        mark: { type: 'point', filled: true, size: 40 },
        encoding: {
          x: opts.x,
          y: { field: 'mib', type: 'quantitative', title: 'MiB' },
          color: { field: 'measure', type: 'nominal', title: null, legend: { orient: 'top', labelLimit: 320 } },
          shape: { field: 'outcome', type: 'nominal', title: 'outcome', legend: { orient: 'top' } },
          tooltip: [
            { field: 'trial' },
            { field: 'batch' },
            { field: 'measure' },
            { field: 'mib', title: 'MiB' },
            { field: 'rss_mib', title: 'peak RSS (MiB)' },
            { field: 'outcome' },
          ],
        },
      },
      ...opts.caps,
      opts.ooms,
    ],
  };
}
