// Claims as people write them ("2-3x", "5% faster", "40-50% less time", "30% less memory"),
// parsed into a band on an effect ratio, and judged against a measured interval of that ratio.
//
// Speed claims are about the speedup: candidate throughput / baseline throughput, or baseline time
// / candidate time (> 1 is faster). Memory claims are about candidate peak memory / baseline peak
// memory (< 1 is less). A point claim ("8x", "5% faster") is widened by `tolerance` on the log
// scale of the claimed effect: ln(effect) / (1 + t) to ln(effect) * (1 + t), so the band never
// reaches 1 and a claim of "faster" can never be confirmed by a slowdown.
import type { ClaimVerdict, Interval } from '../domain/index.js';

export type ClaimQuantity = 'speed' | 'memory';

export interface Claim {
  text: string;
  quantity: ClaimQuantity;
  /** The claimed effect ratio range; high is Infinity (or low 0) for one-sided claims. */
  low: number;
  high: number;
  oneSided: boolean;
  /** up: the claimed ratio is above 1 (faster, more memory); down: below 1 (slower, less memory). */
  direction: 'up' | 'down';
}

export class ClaimSyntaxError extends Error {}

/** Every form the parser knows, for error messages and docs. */
export const CLAIM_FORMS = [
  '"2-3x" or "2-3x faster" (speedup range)',
  '">=1.3x" or "at least 20% faster" (one-sided)',
  '"8x" or "5% faster" (a point, widened by tolerance)',
  '"30-50%" (faster)',
  '"40-50% less time" or "20% lower latency"',
  '"2x slower" or "10% slower"',
  '"30% less memory", "2x less memory" (half) or "2x more memory"',
] as const;

const NUM = String.raw`(\d+(?:\.\d+)?)`;
const RANGE = new RegExp(
  String.raw`^(?:~\s*)?(?:(>=|≥|at least)\s*)?${NUM}(?:\s*(?:-|–|to)\s*${NUM})?\s*(x|×|%)\s*(.*)$`,
  'i',
);

type Words = 'faster' | 'slower' | 'less time' | 'less memory' | 'more memory';

const memory = (more: boolean): string[] => {
  const nouns = ['memory', 'vram', 'ram', 'gpu memory'];
  const phrases = (more ? ['more', 'higher', 'larger'] : ['less', 'lower', 'smaller']).flatMap((a) =>
    ['', 'peak '].flatMap((peak) => nouns.flatMap((n) => ['', ' use', ' usage'].map((u) => `${a} ${peak}${n}${u}`))),
  );
  if (more) return phrases;
  return [
    ...phrases,
    ...['', 'peak '].flatMap((peak) =>
      ['memory', 'vram'].flatMap((n) => ['reduction', 'saving', 'savings'].map((r) => `${peak}${n} ${r}`)),
    ),
  ];
};

/**
 * The words a claim may end with, by meaning, and no others (case and spacing do not matter; no
 * words means faster). docs/compare-and-claims.md (Claim words) lists the same, in the notation of `CLAIM_WORDS_DOC`.
 */
export const CLAIM_WORDS: Readonly<Record<Words, readonly string[]>> = {
  faster: ['faster', 'quicker', 'speedup', 'speed-up', 'throughput', 'more throughput', 'higher throughput'],
  slower: ['slower', 'longer', 'more time', 'less throughput', 'lower throughput', 'more latency', 'higher latency'],
  'less time': ['less time', 'shorter', 'fewer seconds', 'less latency', 'lower latency'],
  'less memory': memory(false),
  'more memory': memory(true),
};

/** The accepted words written compactly, for error messages and docs/compare-and-claims.md. */
export const CLAIM_WORDS_DOC: Readonly<Record<Words, string>> = {
  faster: CLAIM_WORDS.faster.join(', '),
  slower: CLAIM_WORDS.slower.join(', '),
  'less time': CLAIM_WORDS['less time'].join(', '),
  'less memory':
    'less|lower|smaller [peak] memory|vram|ram|gpu memory [use|usage], [peak] memory|vram reduction|saving|savings',
  'more memory': 'more|higher|larger [peak] memory|vram|ram|gpu memory [use|usage]',
};

const WORDS = new Map<string, Words>(
  Object.entries(CLAIM_WORDS).flatMap(([meaning, list]) => list.map((w): [string, Words] => [w, meaning as Words])),
);

/** Parses a claim; `tolerance` widens a point claim on the log scale of its effect. */
export function parseClaim(text: string, tolerance = 0.2): Claim {
  const t = text.trim();
  const fail = (why: string, more = ''): never => {
    throw new ClaimSyntaxError(
      `claim ${JSON.stringify(text)}: ${why}; the forms understood are ${CLAIM_FORMS.join(', ')}${more}`,
    );
  };
  const m = RANGE.exec(t);
  if (!m) return fail('not a number followed by "x" or "%"');
  const [, atLeast, a, b, unitRaw, restRaw] = m;
  const unit = unitRaw === '%' ? '%' : 'x';
  const rest = (restRaw ?? '').trim().toLowerCase().replace(/\s+/g, ' ').replace(/[.!]$/, '');
  const words: Words | undefined = rest === '' ? 'faster' : WORDS.get(rest);
  if (!words) {
    const known = Object.entries(CLAIM_WORDS_DOC)
      .map(([meaning, list]) => `${meaning}: ${list}`)
      .join('; ');
    return fail(
      `unknown words ${JSON.stringify((restRaw ?? '').trim())}`,
      `; the words understood after the number, by meaning, are ${known}`,
    );
  }
  const lo = Number(a);
  const hi = b === undefined ? lo : Number(b);
  if (hi < lo) fail(`the range runs backwards (${lo} to ${hi})`);
  if (atLeast && b !== undefined) fail('">=" takes a single number');
  const [low, high] = unit === '%' ? percentBand(lo, hi, words, fail) : factorBand(lo, hi, words, fail);
  const quantity: ClaimQuantity = words === 'less memory' || words === 'more memory' ? 'memory' : 'speed';
  if (low === 1 && high === 1) fail('a claim of no change is not a claim of an effect');
  const direction = high > 1 ? 'up' : 'down';
  if (low < 1 && high > 1) fail('the range spans no change; a claim names one direction');
  if (atLeast)
    return {
      text: t,
      quantity,
      low: direction === 'up' ? low : 0,
      high: direction === 'up' ? Infinity : high,
      oneSided: true,
      direction,
    };
  if (low === high) {
    const e = Math.log(low);
    const [x, y] = [e / (1 + tolerance), e * (1 + tolerance)].sort((p, q) => p - q) as [number, number];
    return { text: t, quantity, low: Math.exp(x), high: Math.exp(y), oneSided: false, direction };
  }
  return { text: t, quantity, low, high, oneSided: false, direction };
}

function percentBand(lo: number, hi: number, words: Words, fail: (why: string) => never): [number, number] {
  switch (words) {
    case 'faster':
    case 'more memory':
      return [1 + lo / 100, 1 + hi / 100];
    case 'slower':
      // Time grows by p%: speedup 1 / (1 + p).
      return [1 / (1 + hi / 100), 1 / (1 + lo / 100)];
    case 'less time':
      if (hi >= 100) fail('a time cannot shrink by 100% or more');
      return [1 / (1 - lo / 100), 1 / (1 - hi / 100)];
    case 'less memory':
      if (hi >= 100) fail('memory cannot shrink by 100% or more');
      return [1 - hi / 100, 1 - lo / 100];
  }
}

function factorBand(lo: number, hi: number, words: Words, fail: (why: string) => never): [number, number] {
  if (lo <= 0) fail('a factor must be positive');
  switch (words) {
    case 'faster':
    case 'more memory':
      return [lo, hi];
    case 'slower':
    case 'less memory':
      // "2x slower" is half the speed; "2x less memory" is half the memory.
      return [1 / hi, 1 / lo];
    case 'less time':
      return fail('"x less time" is ambiguous; write "2x faster" or "50% less time"');
  }
}

export interface ClaimJudgement {
  verdict: ClaimVerdict;
  reason: string;
}

/**
 * Judges a claim on an interval of its effect ratio. confirmed: the interval lies inside the band
 * and clear of the noise band around 1 on the claimed side; falls short: it lies entirely on the
 * near side of the band (a smaller effect, no effect or the opposite one); exceeds: entirely beyond
 * it; inconclusive otherwise, with the reason.
 */
export function judgeClaim(claim: Claim, effect: Interval | null, noiseBand = 0): ClaimJudgement {
  if (!effect) return { verdict: 'inconclusive', reason: 'no interval: fewer than 3 pairs were measured' };
  const band = describeBand(claim.low, claim.high, claim.oneSided);
  const ci = `${fmt(effect.estimate)}x [${fmt(effect.low)}, ${fmt(effect.high)}]`;
  const up = claim.direction === 'up';
  // The near edge of the band (towards 1) and the far edge.
  const near = up ? claim.low : claim.high;
  const far = up ? claim.high : claim.low;
  const clearOfNoise = up ? effect.low > 1 + noiseBand : effect.high < 1 - noiseBand;
  const inside = effect.low >= claim.low && effect.high <= claim.high;
  if (inside && clearOfNoise) return { verdict: 'confirmed', reason: `the CI ${ci} lies within ${band}` };
  if (up ? effect.high < near : effect.low > near) {
    const measured =
      effect.high < 1 ? 'the opposite direction' : effect.low > 1 ? 'a smaller effect' : 'no clear effect';
    return {
      verdict: 'falls short',
      reason: `the CI ${ci} lies entirely ${up ? 'below' : 'above'} ${band}: ${measured}`,
    };
  }
  if (!claim.oneSided && (up ? effect.low > far : effect.high < far)) {
    return {
      verdict: 'exceeds',
      reason: `the CI ${ci} lies entirely ${up ? 'above' : 'below'} ${band}: a larger effect than claimed`,
    };
  }
  if (inside && !clearOfNoise) {
    return {
      verdict: 'inconclusive',
      reason:
        `the CI ${ci} lies within ${band} but reaches into the noise band 1 +/- ${fmt(noiseBand)}, ` +
        'too small an effect to call',
    };
  }
  const width = Math.log(effect.high) - Math.log(effect.low);
  if (!claim.oneSided && width > Math.log(claim.high) - Math.log(claim.low)) {
    return {
      verdict: 'inconclusive',
      reason: `too noisy: the CI ${ci} is wider than the claimed band ${band}; add pairs or steps`,
    };
  }
  const edge = effect.low < claim.low && effect.high > claim.low ? claim.low : claim.high;
  return {
    verdict: 'inconclusive',
    reason: `the CI ${ci} straddles the edge ${fmt(edge)}x of ${band}; more pairs may decide`,
  };
}

/** The claimed band in words: ">= 1.3x", "<= 0.909x" (a one-sided claim downwards) or "2x to 3x". */
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
