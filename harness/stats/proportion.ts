// Confidence intervals for a proportion (an error rate measured by simulation): the Wilson score
// interval (Wilson 1927; recommended over the Wald interval by Brown, Cai & DasGupta 2001), which
// stays inside [0, 1] and keeps its coverage near 0 and 1, where error rates live.
import type { Interval } from '../domain/index.js';

/** The (1 - alpha) Wilson interval of `successes` out of `n`; the estimate is successes / n. */
export function wilsonInterval(successes: number, n: number, alpha = 0.05): Interval {
  if (!(Number.isInteger(n) && n >= 1 && Number.isInteger(successes) && successes >= 0 && successes <= n))
    throw new RangeError(`wilsonInterval: expected integers 0 <= successes <= n, n >= 1; got ${successes} of ${n}`);
  const z = normalQuantile(1 - alpha / 2);
  const p = successes / n;
  const z2n = (z * z) / n;
  const centre = (p + z2n / 2) / (1 + z2n);
  const half = (z / (1 + z2n)) * Math.sqrt((p * (1 - p)) / n + z2n / (4 * n));
  return {
    estimate: p,
    low: successes === 0 ? 0 : Math.max(0, centre - half),
    high: successes === n ? 1 : Math.min(1, centre + half),
    level: 1 - alpha,
  };
}

// Acklam's rational approximation of the standard normal quantile (relative error below 1.2e-9);
// simple-statistics' probit is good to three digits only.
const A = [
  -3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1,
  2.506628277459239,
];
const B = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
const C = [
  -7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968,
  2.938163982698783,
];
const D = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
const P_LOW = 0.02425;

/** The p-quantile of the standard normal distribution, 0 < p < 1. */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: expected 0 < p < 1, got ${p}`);
  const poly = (c: number[], x: number) => c.reduce((acc, k) => acc * x + k, 0);
  if (p < P_LOW) {
    const q = Math.sqrt(-2 * Math.log(p));
    return poly(C, q) / (poly(D, q) * q + 1);
  }
  if (p > 1 - P_LOW) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (poly(A, r) * q) / (poly(B, r) * r + 1);
}

// erfc by the Chebyshev fit in Numerical Recipes (fractional error below 1.2e-7 everywhere), kept in
// log space so that far tails do not underflow: ln erfc(z) = ln t - z^2 + poly(t), t = 1 / (1 + z/2).
const ERFC = [
  -1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398, 1.48851587, -0.82215223,
  0.17087277,
];
function lnErfc(z: number): number {
  const t = 1 / (1 + 0.5 * z);
  let poly = 0;
  for (let i = ERFC.length - 1; i >= 0; i--) poly = poly * t + ERFC[i]!;
  return Math.log(t) - z * z + poly;
}

/** ln P(Z <= x) for a standard normal Z, accurate far into both tails. */
export function lnNormalCdf(x: number): number {
  if (x < 0) return lnErfc(-x / Math.SQRT2) - Math.LN2;
  return Math.log1p(-Math.exp(lnErfc(x / Math.SQRT2) - Math.LN2));
}

/** P(Z <= x) for a standard normal Z. */
export function normalCdf(x: number): number {
  return Math.exp(lnNormalCdf(x));
}
