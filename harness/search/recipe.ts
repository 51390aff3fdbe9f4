// What a measured max batch implies beyond the machine it ran on: the batch and gradient accumulation
// steps that keep a training recipe's effective batch, the learning rate by the two scaling rules, and
// the max batch that the fitted memory predicts on other cards. Rules and predictions, not measurements:
// every caller labels them so.
import { fitLinear, type Reading } from './memory-fit.js';

/**
 * Per-rank batch sizes that make `effective` with whole accumulation steps, largest first, none above
 * `largest`: the divisors of effective / ranks.
 */
export function recipeBatches(effective: number, ranks: number, largest: number): number[] {
  const perRank = effective / ranks;
  if (!Number.isInteger(perRank) || perRank < 1) return [];
  const out: number[] = [];
  for (let b = Math.min(perRank, Math.floor(largest)); b >= 1; b--) if (perRank % b === 0) out.push(b);
  return out;
}

export interface LrRules {
  linear: number;
  sqrt: number;
}

/** The learning rate at `effective` from `baseLr` at `baseBatch`, by the linear and square-root rules. */
export function scaleLr(baseLr: number, baseBatch: number, effective: number): LrRules {
  const ratio = effective / baseBatch;
  return { linear: baseLr * ratio, sqrt: baseLr * Math.sqrt(ratio) };
}

/** Cards by their memory as nvidia-smi reports it (memory.total). */
export const CARDS: readonly { card: string; gb: number; bytes: number }[] = [
  { card: '16 GB', gb: 16, bytes: 16 * 2 ** 30 },
  { card: '24 GB', gb: 24, bytes: 24 * 2 ** 30 },
  { card: '40 GB', gb: 40, bytes: 40 * 2 ** 30 },
  { card: '80 GB', gb: 80, bytes: 80 * 2 ** 30 },
  // H200: 143771 MiB.
  { card: '141 GB', gb: 141, bytes: 143_771 * 2 ** 20 },
];

/** Seed 003's rule of thumb for an embedding model: batch ~ (VRAM_GB - 4) x 1.5. */
export function ruleOfThumb(gb: number): number {
  return Math.max(0, Math.round((gb - 4) * 1.5));
}

export interface CardPrediction {
  card: string;
  bytes: number;
  /** Largest multiple of m whose predicted memory fits the card; null when not even the fixed part fits. */
  predicted: number | null;
  ruleOfThumb: number;
}

/**
 * From memory readings (batch, bytes) that ran: fixed bytes plus bytes per sample (least squares), and
 * the largest multiple of `m` that this line keeps within each card's memory. Undefined when the
 * readings do not rise with batch.
 */
export function predictCards(
  readings: readonly Reading[],
  m: number,
  cards: readonly { card: string; gb: number; bytes: number }[] = CARDS,
): { fixed: number; perSample: number; rows: CardPrediction[] } | undefined {
  const fit = fitLinear(readings);
  if (!fit || !(fit.slope > 0)) return undefined;
  const fixed = Math.max(0, fit.intercept);
  return {
    fixed,
    perSample: fit.slope,
    rows: cards.map(({ card, gb, bytes }) => ({
      card,
      bytes,
      predicted: predictMax(fixed, fit.slope, bytes, m),
      ruleOfThumb: ruleOfThumb(gb),
    })),
  };
}

/** The largest multiple of `m` whose memory, fixed + perSample x batch, fits `bytes`; null when none does. */
export function predictMax(fixed: number, perSample: number, bytes: number, m: number): number | null {
  // A millionth of a multiple is rounding in the fit, not memory.
  const k = Math.floor((bytes - fixed) / perSample / m + 1e-6);
  return k >= 1 ? k * m : null;
}

/** Relative difference under which a device's memory counts as a card's size (80 GiB against 81559 MiB). */
const SAME_CARD = 0.03;

/** The card whose size matches `bytes` within 3%, if any. */
export function matchingCard<T extends { bytes: number }>(rows: readonly T[], bytes: number): T | undefined {
  return rows.find((r) => Math.abs(r.bytes - bytes) <= SAME_CARD * r.bytes);
}
