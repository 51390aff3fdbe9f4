// The max-batch section's extra blocks: buckets, the recipe, predictions for other cards, the boundary
// band, the cap the max was found under, and the lowerings that later stages caused.
import { formatBytes } from '../experiment/units.js';
import { tableBlock, text, type Block } from './blocks.js';
import { figure } from './format.js';
import { loweringSentence } from './stage-failure.js';
import { growthPhrase } from '../search/confirmation.js';
import { riskPercent } from '../search/band-model.js';
import type { MaxBatchSummary, Survival } from '../domain/index.js';

/** The bucket table: max batch and tokens per batch per bucket, and what the neighbours saved. */
export function bucketBlocks(r: MaxBatchSummary): Block[] {
  const k = r.buckets;
  if (!k) return [];
  const b = (v: unknown) => figure(v);
  const first = k.rows[0];
  const model = k.model
    ? ` One memory model across buckets guided the probes: ${formatBytes(k.model.a)} + ` +
      `${figure(k.model.b, (v) => v.toFixed(0))} B x batch x ${k.param} + ` +
      `${figure(k.model.c, (v) => v.toPrecision(3))} B x batch x ${k.param}^2.`
    : '';
  return [
    text(
      `Max ${r.param} per ${k.param} bucket, longest first; every max ran, and the next multiple of ` +
        `${b(r.multiple_of)} failed at the same ${k.param} when the status is exact. ` +
        `${b(k.probes_total)} probes located all ${b(k.rows.length)} maxima; the longest bucket, ` +
        `searched with no neighbour (as an independent search would be), took ${b(first?.probesToMax)}.${model}`,
    ),
    tableBlock(
      [
        k.param,
        `max ${r.param}`,
        'tokens per batch (max)',
        `chosen ${r.param}`,
        'tokens per batch (chosen)',
        'status',
        'probes',
        'what it survived',
      ],
      k.rows.map((row) => [
        b(row.value),
        b(row.max),
        figure(row.max === null ? null : row.max * row.value),
        b(row.chosen),
        b(row.tokens),
        row.status === 'exact' ? `exact (${b(row.smallestFail)} failed)` : row.status,
        b(row.probesToMax),
        survivedText(row.survived),
      ]),
    ),
  ];
}

/** keep_effective_batch and the learning-rate rules. */
export function recipeBlocks(r: MaxBatchSummary): Block[] {
  const x = r.recipe;
  if (!x) return [];
  const rows: string[][] = [];
  if (x.accumulation_steps !== null)
    rows.push([
      `${r.param} x ${x.accumulation_param}${x.ranks > 1 ? ' x ranks' : ''}`,
      `${figure(x.batch)} x ${figure(x.accumulation_steps)}${x.ranks > 1 ? ` x ${figure(x.ranks)}` : ''} = ${figure(x.effective_batch)}`,
      'measured: the batch ran',
    ]);
  if (x.lr) {
    rows.push([
      'learning rate, linear rule',
      Number(x.lr.linear.toPrecision(3)).toString(),
      'a rule, not a measurement',
    ]);
    rows.push([
      'learning rate, square-root rule',
      Number(x.lr.sqrt.toPrecision(3)).toString(),
      'a rule, not a measurement',
    ]);
  }
  return [
    text(`Training recipe: ${x.statement}.${x.lr ? ` Learning rate: ${x.lr.statement}.` : ''}`),
    ...(rows.length > 0 ? [tableBlock(['recipe', 'value', 'kind'], rows)] : []),
  ];
}

/** predicted_by: the earlier stage's prediction for this device against the max measured on it. */
export function confirmationBlocks(r: MaxBatchSummary): Block[] {
  const c = r.device_confirmation;
  if (!c) return [];
  const measured = c.status === 'exact' ? figure(c.measured) : `${figure(c.measured)} (${c.status})`;
  return [
    tableBlock(
      ['device', 'memory', `predicted max ${r.param} (from ${c.of_stage})`, `measured max ${r.param}`, 'probes'],
      [
        [
          `${c.device} (${c.host})`,
          figure(c.memory_bytes, formatBytes),
          figure(c.predicted, (v) => `${v} (prediction)`),
          measured,
          figure(c.probes),
        ],
      ],
    ),
  ];
}

/** Max batch predicted on other cards from the fitted memory, beside the seed's rule of thumb. */
export function predictionBlocks(r: MaxBatchSummary): Block[] {
  const p = r.predictions;
  // A card's max from host RSS of a CPU job means nothing: shown for device memory, or when asked for.
  if (!p || p.shown === false) return [];
  const measured = p.rows.some((row) => row.measured != null);
  return [
    text(`Other cards: ${p.statement}.`),
    tableBlock(
      ['card', `predicted max ${r.param}`, 'rule of thumb (VRAM - 4) x 1.5', ...(measured ? ['measured'] : [])],
      p.rows.map((row) => [
        row.card,
        figure(row.predicted, (v) => `${v} (prediction)`),
        figure(row.rule_of_thumb),
        ...(measured ? [figure(row.measured ?? null)] : []),
      ]),
    ),
  ];
}

/** Answer rows for the lowerings that later stages caused (every config OOMed at the chosen batch). */
export function loweredRows(r: MaxBatchSummary): string[][] {
  return (r.lowered_after ?? []).map((l) => [
    `lowered after stage ${l.failure.stage}`,
    figure(l.batch),
    loweringSentence(l),
    l.survived?.statement ?? '-',
  ]);
}

const CAPS: Record<string, string> = {
  'cgroup-v1':
    'a memory cgroup (v1): the real memory of the whole trial tree, child processes (DataLoader workers) included',
  'cgroup-v2':
    'a memory cgroup (v2): the real memory of the whole trial tree, child processes (DataLoader workers) included',
  'prlimit-as':
    "prlimit --as: each process's address space, which moves with glibc arenas and threads, not only with tensors",
  none: 'no cap',
};

/** Which cap the max was found under, and the band that repeating the boundary measured. */
export function bandBlocks(r: MaxBatchSummary): Block[] {
  const out: Block[] = [];
  if (r.cap_mechanism && r.cap_bytes !== null)
    out.push(
      text(
        `The max was found under a ${formatBytes(r.cap_bytes)} cap enforced by ${CAPS[r.cap_mechanism] ?? r.cap_mechanism}.`,
      ),
    );
  const band = r.band;
  if (!band) return out;
  const steps = band.steps === null ? 'probe-length' : `${band.steps}-step`;
  const some = band.failed_some.map((x) => `${x.batch} passed ${x.passed} of ${x.passed + x.failed}`).join(', ');
  const model = band.model;
  out.push(
    text(
      `The boundary was run again (${band.repeats} more ${steps} runs of the max and of the smallest failing batch): ` +
        `${band.passed_all === null ? 'no batch passed every run' : `${band.passed_all} passed every run`}` +
        `${some ? `; above it ${some}` : ''}` +
        `${band.failed_all === null ? '' : `; ${band.failed_all} failed every run`}. ` +
        (model && band.passed_all !== null
          ? `The limit is a band: the model of these ${model.runs} runs puts a run's limit at ` +
            `${Math.round(model.limit)} +/- ${Math.round(model.spread)}, and the chance that a run at the max written, ` +
            `${band.passed_all}, fails at ${riskPercent(model.risk)} (max_risk ${riskPercent(model.max_risk)}). ` +
            'The max written passed every one of its runs.'
          : 'The max written is one that passed every run.'),
    ),
  );
  return out;
}

/** When a batch was first known to hold, beside the max, which takes longer to prove. */
export function firstHoldBlocks(r: MaxBatchSummary): Block[] {
  const h = r.first_hold;
  if (!h) return [];
  const max =
    h.batch === r.max
      ? 'it is the max'
      : r.confirmed
        ? `the max ${figure(r.max)} above it was proven to hold later`
        : `the max ${figure(r.max)} above it is not proven to hold`;
  return [
    text(
      `A batch that holds was known ${h.after_seconds.toFixed(0)} s into the stage (trial ${h.trial}, ${h.trials} trials): ` +
        `${h.batch} ran until its memory flattened in a fresh process (${growthPhrase(h.memory_growth)}); ${max}.`,
    ),
  ];
}

/** What a run survived, with its memory verdict when it ran until memory flattened. */
export function survivedText(s: Survival | undefined): string {
  if (!s) return '-';
  return s.memory_growth ? `${s.statement}; ${growthPhrase(s.memory_growth)}` : s.statement;
}

const settings = (c: Readonly<Record<string, unknown>>) =>
  Object.entries(c)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(', ');

/**
 * The max against the written config, in words: "found with num_workers=0; not measured with the written
 * num_workers=1". Empty when later stages changed nothing the max ran with.
 */
export function maxFinalStatement(r: Pick<MaxBatchSummary, 'max_final'>): string {
  const f = r.max_final;
  if (!f) return '';
  // A setting a later stage added was the workload's own default when the max was found.
  const before = Object.keys(f.written)
    .map((k) => (k in f.found_with ? `${k}=${String(f.found_with[k])}` : `${k} unset`))
    .join(', ');
  const found = `max ${f.max} was found with ${before}`;
  const written = `the written ${settings(f.written)}`;
  switch (f.outcome) {
    case 'confirmed':
      return `${found}; it also held with ${written} (trial ${figure(f.trial)})`;
    case 'failed':
      return `${found}; with ${written} it ran out of memory (trial ${figure(f.trial)}): it is not a max for the written config`;
    case 'not-measured':
      return `${found}; it was not measured with ${written}, so it is a max for the config it was found with only`;
  }
}
