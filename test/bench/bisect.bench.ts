// The bisection's calibration: simulated histories of 16 commits (lognormal run-time noise at a
// recorded CV, a planted step at a random commit) bisected by the shipped code (runBisect over
// compareOracle, which runs runCompare: the compare stage's rounds, pairs and sequential test),
// next to a plain bisection that trusts one run of each side. `npm run bench:bisect`; BISECT_REPS
// sets the bisections per cell.
import { wilsonInterval } from '../../harness/stats/proportion.js';
import { createRng } from '../../harness/stats/rng.js';
import { BISECT, history, plainBisect, simulatedBisect } from '../support/bisect-sim.js';
import { writeSection } from './results.js';

const REPS = Number(process.env['BISECT_REPS'] ?? 400);
const COMMITS = 16;
/** The issue's target: at most 5% wrong at 5% noise and a 10% step. */
const TARGET = { cv: 0.05, step: 0.1, wrong: 0.05 };

interface Cell {
  cv: number;
  step: number;
}

interface Tally {
  wrong: number;
  exact: number;
  range: number;
  noCulprit: number;
  steps: number[];
  rounds: number[];
  widths: number[];
  plainWrong: number;
  plainSteps: number[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const ci = (k: number, n: number) => {
  const w = wilsonInterval(k, n);
  return `${pct(w.estimate)} [${pct(w.low)}, ${pct(w.high)}]`;
};

/**
 * Wrong: a named commit that is not the culprit, a range without it, or any answer but "no culprit"
 * when nothing got slower. A range that holds the culprit, and "no culprit" when something did
 * get slower, are answers that say less, not wrong ones; they are counted apart.
 */
async function run(cell: Cell, seed0: number): Promise<Tally> {
  const t: Tally = {
    wrong: 0,
    exact: 0,
    range: 0,
    noCulprit: 0,
    steps: [],
    rounds: [],
    widths: [],
    plainWrong: 0,
    plainSteps: [],
  };
  const pick = createRng(seed0);
  for (let r = 0; r < REPS; r++) {
    const culprit = cell.step > 0 ? Math.floor(pick() * COMMITS) : null;
    const h = history(COMMITS, { culprit, step: cell.step, cv: cell.cv });
    const out = await simulatedBisect(h, seed0 + 1 + r);
    const o = out.outcome;
    if (o.kind === 'culprit') {
      if (o.index === culprit) t.exact += 1;
      else t.wrong += 1;
    } else if (o.kind === 'range') {
      t.range += 1;
      t.widths.push(o.commits.length);
      if (culprit === null || culprit < o.first || culprit > o.last) t.wrong += 1;
    } else if (o.kind === 'no-culprit') t.noCulprit += 1;
    t.steps.push(out.steps.length);
    t.rounds.push(out.trials / 2);
    if (culprit !== null) {
      const p = plainBisect(h, seed0 + 500_000 + r);
      if (p.culprit !== culprit) t.plainWrong += 1;
      t.plainSteps.push(p.steps);
    }
  }
  return t;
}

async function main(): Promise<void> {
  const started = Date.now();
  const cells: Cell[] = [
    { cv: 0.02, step: 0.1 },
    { cv: 0.05, step: 0.1 },
    { cv: 0.1, step: 0.1 },
    { cv: 0.05, step: 0.15 },
    { cv: 0.05, step: 0 },
  ];
  const lines: string[] = [
    '## Bisection (simulation through the shipped code)',
    '',
    `Produced by \`npm run bench:bisect\` on ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ` +
      `${REPS} bisections per row over ${COMMITS} commits, the culprit drawn uniformly among them. ` +
      'Each run of a commit takes a lognormal time at the given CV (times the step from the culprit on). ' +
      'The shipped code decides: `runBisect` over `compareOracle`, which measures every step with `runCompare` ' +
      `(the compare stage's interleaved rounds, pairs and sequential looks; ${BISECT.minRounds} to ${BISECT.maxRounds} rounds, ` +
      `the check ${BISECT.maxRounds}, a repeat of an undecided step up to ${BISECT.extendedMaxRounds}, band ` +
      `${pct(BISECT.noiseBand)} for the check and half the measured step for the steps). ` +
      'The plain bisection, as `git bisect run` with a careful timing script: good and bad trusted and timed once each, ' +
      'a threshold halfway between them, each tested commit timed once and called slower above the threshold ' +
      '(its steps count the good/bad timing as one). ' +
      'Wrong: a named commit that is not the culprit, or a range without it (with no step: any culprit or range). ' +
      'Rates with 95% Wilson intervals; rounds are the pairs of runs of the whole bisection.',
    '',
    '| noise (CV) | step | wrong (<= 5% at 5% noise, 10% step) | exact culprit | range left (median width) ' +
      '| "no culprit" | median steps | median rounds | plain bisection: wrong | plain: steps |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  let met = true;
  for (const [i, cell] of cells.entries()) {
    const t = await run(cell, 1_000_000 * (i + 1));
    const target = cell.cv === TARGET.cv && cell.step === TARGET.step;
    const ok = t.wrong / REPS <= TARGET.wrong;
    if (target) met &&= ok;
    const plainN = t.plainSteps.length;
    lines.push(
      `| ${pct(cell.cv)} | ${cell.step ? `${pct(cell.step)} slower` : 'none'} ` +
        `| ${ci(t.wrong, REPS)}${target ? (ok ? ' met' : ' **NOT MET**') : ''} | ${pct(t.exact / REPS)} ` +
        `| ${pct(t.range / REPS)}${t.widths.length ? ` (${median(t.widths)})` : ''} | ${pct(t.noCulprit / REPS)} ` +
        `| ${median(t.steps)} | ${median(t.rounds)} ` +
        `| ${plainN ? ci(t.plainWrong, plainN) : 'n/a'} | ${plainN ? median(t.plainSteps) : 'n/a'} |`,
    );
    process.stderr.write(`cv ${cell.cv} step ${cell.step}: done (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  }
  lines.push(
    '',
    `**Target ${met ? 'met' : 'NOT MET'}**: the named commit is wrong in at most 5% of bisections at 5% noise and a ` +
      `10% step; ${((Date.now() - started) / 1000).toFixed(0)} s.`,
  );
  writeSection('bisect', lines.join('\n'));
  console.log(lines.join('\n'));
  if (!met) process.exitCode = 1;
}

await main();
