// The gate's ledger of nights, <reports>/<experiment>/nights.json: each night the paired gate judged, with
// its verdict against the reference build, its ratio and CI, and the gate's run directory. The reference of
// a night is the pinned baseline (`tunebench baseline set`), else the latest night that was accepted (no
// regression shown, or `tunebench baseline accept`) or that started the ledger. A flagged, undecided or
// failed night never becomes a reference.
import { join } from 'node:path';
import { z } from 'zod';
import { writeJsonAtomic } from '../store/atomic.js';
import { readHistoryFile, type AcceptedRun, type BaselinePin } from './files.js';
import type { RunEntry } from './index.js';

export const NIGHTS_FILE = 'nights.json';

export const NIGHT_VERDICTS = ['first', 'same-commit', 'accepted', 'flagged', 'undecided', 'failed'] as const;
export type NightVerdictWord = (typeof NIGHT_VERDICTS)[number];

const nightSchema = z.object({
  run_id: z.string(),
  dir: z.string(),
  commit: z.string().nullable(),
  started_at: z.string(),
  /**
   * first: the ledger's first night (the reference from then on); same-commit: tonight's build is the
   * reference's, so no code changed; accepted: the paired CI showed no slowdown beyond the threshold;
   * flagged: it showed one (exit 3); undecided: the rounds ran out first; failed: a build or its trials failed.
   */
  verdict: z.enum(NIGHT_VERDICTS),
  reference: z.object({ run_id: z.string(), commit: z.string().nullable() }).nullable(),
  /** tonight / reference throughput over the paired rounds, with its sequential 95% CI; null without a measurement. */
  ratio: z.object({ estimate: z.number(), low: z.number(), high: z.number() }).nullable(),
  rounds: z.number(),
  trials: z.number(),
  /** The threshold the night was judged at, as a fraction (0.05: 5%). */
  threshold: z.number(),
  gate_dir: z.string().nullable(),
  failure: z.object({ side: z.enum(['reference', 'tonight']), detail: z.string() }).nullable(),
  /** A flagged night's bisection between the two commits: the arguments of `tunebench bisect`; else null. */
  bisect: z.array(z.string()).nullable(),
  judged_at: z.string(),
});
export type Night = z.infer<typeof nightSchema>;

const nightsFileSchema = z.object({ nights: z.array(nightSchema) });

/** The nights the gate judged in an experiment folder, oldest first; none when it never ran. */
export function readNights(experimentDir: string): Night[] {
  return (
    readHistoryFile(
      nightsFileSchema,
      join(experimentDir, NIGHTS_FILE),
      "the nightly gate's ledger",
      'move it aside; the next night starts a new ledger with itself as the reference',
    )?.nights ?? []
  );
}

export function writeNights(experimentDir: string, nights: readonly Night[]): string {
  const path = join(experimentDir, NIGHTS_FILE);
  writeJsonAtomic(path, { nights });
  return path;
}

/** Verdicts whose night can be a reference. */
const REFERENCE_VERDICTS: ReadonlySet<NightVerdictWord> = new Set(['first', 'accepted']);

/**
 * The run tonight is measured against: the pinned baseline when there is one (and it is not tonight), else
 * the latest run before tonight that the ledger accepted or started with, or that was accepted by hand;
 * null when there is none (tonight starts the ledger).
 */
export function referenceOf(
  runs: readonly RunEntry[],
  tonight: RunEntry,
  nights: readonly Night[],
  pin: BaselinePin | null,
  accepted: readonly AcceptedRun[],
): RunEntry | null {
  const byId = new Map(runs.map((r) => [r.run_id, r]));
  if (pin && pin.run_id !== tonight.run_id) {
    const pinned = byId.get(pin.run_id);
    if (pinned) return pinned;
  }
  const eligible = new Set([
    ...nights.filter((n) => REFERENCE_VERDICTS.has(n.verdict)).map((n) => n.run_id),
    ...accepted.map((a) => a.run_id),
  ]);
  const before = runs.filter(
    (r) => r.run_id !== tonight.run_id && eligible.has(r.run_id) && r.started_at <= tonight.started_at,
  );
  return before.at(-1) ?? null;
}

const short = (commit: string | null | undefined) => (commit ? commit.slice(0, 12) : 'no commit');
const x = (v: number) => `${v.toFixed(3)}x`;

/** A night's verdict in one sentence: what the gate prints, and what history.md lists. */
export function nightText(n: Night): string {
  const pct = `${(n.threshold * 100).toFixed(1).replace(/\.0$/, '')}%`;
  const ref = n.reference ? `reference ${short(n.reference.commit)} (run ${n.reference.run_id})` : 'no reference';
  const ratio = n.ratio
    ? `tonight/reference ${x(n.ratio.estimate)} [${x(n.ratio.low)}, ${x(n.ratio.high)}] over ${n.rounds} paired rounds`
    : '';
  switch (n.verdict) {
    case 'first':
      return `night ${n.run_id} (${short(n.commit)}) starts the gate's ledger: its commit is the reference from now on`;
    case 'same-commit':
      return (
        `night ${n.run_id} runs the reference's commit ${short(n.commit)}: no code changed, so no code regression, ` +
        'whatever the machine did tonight'
      );
    case 'accepted':
      return `${short(n.commit)} against the ${ref}: ${ratio}: no slowdown beyond ${pct}; accepted, the reference from now on`;
    case 'flagged':
      return `REGRESSION: ${short(n.commit)} against the ${ref}: ${ratio}, a slowdown beyond ${pct}`;
    case 'undecided':
      return (
        `undecided: ${short(n.commit)} against the ${ref}: ${ratio}: the CI still spans ${pct} of slowdown; ` +
        'not a reference: the next night is measured against the same one'
      );
    case 'failed':
      return `the night could not be measured against the ${ref}: ${n.failure ? `${n.failure.side}: ${n.failure.detail}` : 'no trial ran'}`;
  }
}
