// `tunebench time --baseline NAME` in words: each command's median against the saved one, the speed-up
// with its CI and verdict, the commands that do not match, and the environment's differences.
import { tooFewRuns, type BaselineComparison, type BaselineRow } from '../analysis/time-baseline.js';
import { fmtDuration } from './time.js';

const x = (v: number) => `${v.toFixed(v >= 10 ? 1 : 2)}x`;

function rowText(r: BaselineRow, band: number): string {
  const medians = r.median
    ? `${fmtDuration(r.median.baseline)} saved (${r.runs.baseline} runs) -> ${fmtDuration(r.median.today)} today ` +
      `(${r.runs.today} runs)`
    : `${r.runs.baseline} saved runs, ${r.runs.today} today`;
  const s = r.speedup;
  if (!s || tooFewRuns(r)) return `${r.label}: ${medians}: undecided (a CI needs at least 3 runs on each side)`;
  const ci = `${x(s.estimate)} [${x(s.low)}, ${x(s.high)}] as fast as saved`;
  const why =
    r.verdict === 'no significant difference'
      ? ` (within +/-${(band * 100).toFixed(1)}%)`
      : r.verdict === 'undecided'
        ? ` (the CI is neither clear of +/-${(band * 100).toFixed(1)}% nor inside it; more --runs may decide)`
        : '';
  return `${r.label}: ${medians}; ${ci}: ${r.verdict}${why}`;
}

/** The comparison as lines for the terminal. */
export function baselineLines(c: BaselineComparison): string[] {
  const b = c.baseline;
  const out = [
    `against baseline ${b.name} (saved ${b.saved_at}, run ${b.run_id}): unpaired, the saved runs and ` +
      "today's were not interleaved, so a change in the machine's load between them counts as a difference; " +
      'speed-ups are ratios of geometric means with Welch 95% CIs',
    ...c.rows.map((r) => `  ${rowText(r, c.noise_band)}`),
  ];
  const saved = [...c.rows.map((r) => r.label), ...c.not_run_today];
  if (c.not_in_baseline.length > 0)
    out.push(
      `  not in baseline ${b.name}: ${c.not_in_baseline.join(', ')} ` +
        `(commands must match the saved ones exactly; saved: ${saved.join(', ')})`,
    );
  if (c.not_run_today.length > 0) out.push(`  saved but not run today: ${c.not_run_today.join(', ')}`);
  if (c.environment.length > 0)
    out.push(
      `  warning: the environment differs from the baseline's (before = saved, after = today): ` +
        `${c.environment.map((d) => d.text).join('; ')}`,
    );
  return out;
}
