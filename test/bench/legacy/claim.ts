// Frozen copy of harness/stats/claim.ts at 2aed9d5 for the calibration benchmark (old vs new); do not edit.
// Speedup claims as people write them, parsed into a band on the speedup (new throughput / old
// throughput, or old time / new time), and judged against a measured CI of that speedup.
//
// Forms: "2-3x" (faster), ">=1.3x", "8x" (about 8x: +/- tolerance), "5-10% faster",
// "30-50%" (faster), ">= 20% faster", "40-50% less time", "2x slower", "10% slower".

import type { Interval } from './bootstrap.js';

export interface Claim {
  text: string;
  /** The claimed speedup range (>1 is faster); high is Infinity for one-sided claims. */
  low: number;
  high: number;
  oneSided: boolean;
}

export class ClaimSyntaxError extends Error {}

const NUM = String.raw`(\d+(?:\.\d+)?)`;
const RANGE = new RegExp(
  String.raw`^(?:~\s*)?(?:(>=|≥|at least)\s*)?${NUM}(?:\s*(?:-|–|to)\s*${NUM})?\s*(x|×|%)\s*(.*)$`,
  'i',
);

/** Parses a claim; `tolerance` widens a point claim such as "8x" to [8 / (1 + t), 8 * (1 + t)]. */
export function parseClaim(text: string, tolerance = 0.1): Claim {
  const t = text.trim();
  const m = RANGE.exec(t);
  const fail = (why: string): never => {
    throw new ClaimSyntaxError(
      `claim ${JSON.stringify(text)}: ${why}; expected a form such as "2-3x", ">=1.3x", "8x", "5-10% faster" or "40-50% less time"`,
    );
  };
  if (!m) return fail('not a speedup');
  const [, atLeast, a, b, unit, restRaw] = m;
  const rest = (restRaw ?? '').trim().toLowerCase();
  const lo = Number(a);
  const hi = b === undefined ? lo : Number(b);
  if (hi < lo) fail(`the range runs backwards (${lo} to ${hi})`);
  if (atLeast && b !== undefined) fail('">=" takes a single number');
  const slower = /^(slower|more time|longer)\b/.test(rest);
  const lessTime = /^(less time|shorter|fewer seconds|less latency|lower latency)\b/.test(rest);
  if (
    rest &&
    !slower &&
    !lessTime &&
    !/^(faster|speedup|speed-up|more throughput|higher throughput|more\b|quicker|better)/.test(rest)
  ) {
    fail(`unknown direction ${JSON.stringify(restRaw)}`);
  }
  let low: number;
  let high: number;
  if (unit === '%') {
    if (lessTime) {
      if (hi >= 100) fail('a time cannot shrink by 100% or more');
      // Time shrinks by p%: speedup 1 / (1 - p).
      low = 1 / (1 - lo / 100);
      high = 1 / (1 - hi / 100);
    } else if (slower) {
      low = 1 / (1 + hi / 100);
      high = 1 / (1 + lo / 100);
    } else {
      low = 1 + lo / 100;
      high = 1 + hi / 100;
    }
  } else {
    if (lo <= 0) fail('a factor must be positive');
    if (lessTime) fail('"x less time" is ambiguous; write "2x faster" or "50% less time"');
    [low, high] = slower ? [1 / hi, 1 / lo] : [lo, hi];
  }
  if (atLeast) return { text: t, low: slower ? 0 : low, high: slower ? high : Infinity, oneSided: true };
  if (low === high) {
    low = low / (1 + tolerance);
    high = high * (1 + tolerance);
  }
  return { text: t, low, high, oneSided: false };
}

export type ClaimVerdict = 'confirmed' | 'refuted' | 'inconclusive';

export interface ClaimJudgement {
  verdict: ClaimVerdict;
  reason: string;
}

/**
 * confirmed: the CI lies inside the band (above the floor for one-sided claims); refuted: the CI lies
 * entirely outside it; inconclusive: neither, with the reason.
 */
export function judgeClaim(claim: Claim, speedup: Interval | null): ClaimJudgement {
  if (!speedup) return { verdict: 'inconclusive', reason: 'no measurement: a side has no successful trial' };
  const band = describeBand(claim.low, claim.high, claim.oneSided);
  const ci = `${fmt(speedup.estimate)}x [${fmt(speedup.low)}, ${fmt(speedup.high)}]`;
  if (speedup.low >= claim.low && speedup.high <= claim.high)
    return { verdict: 'confirmed', reason: `the CI ${ci} lies within ${band}` };
  if (speedup.high < claim.low || speedup.low > claim.high)
    return { verdict: 'refuted', reason: `the CI ${ci} lies entirely outside ${band}` };
  const width = speedup.high - speedup.low;
  if (!claim.oneSided && width > claim.high - claim.low)
    return {
      verdict: 'inconclusive',
      reason: `too noisy: the CI ${ci} is wider than the claimed band ${band}; add trials or steps`,
    };
  return { verdict: 'inconclusive', reason: `the CI ${ci} straddles an edge of ${band}; more trials may decide` };
}

/** The claimed band in words: ">= 1.3x", "<= 0.909x" (a one-sided "slower" claim) or "2x to 3x". */
export function describeBand(
  low: number,
  high: number | null,
  oneSided: boolean,
  f: (v: number) => string = fmt,
): string {
  if (!oneSided) return `${f(low)}x to ${f(high ?? Infinity)}x`;
  return high === null || high === Infinity ? `>= ${f(low)}x` : `<= ${f(high)}x`;
}

/** Three significant digits, trailing zeros dropped: 2, 1.5, 0.909. */
export function fmt(v: number): string {
  return Number(v.toPrecision(3)).toString();
}
