// A bisection's outputs: bisect.json's shape, the sentences of its progress and answer, bisect.md,
// the chart of the ratio per tested commit in history order, and report.html. One model in
// (BisectFile), one format out each; sentences are made here, from typed fields.
import type { BisectResult, BisectStep } from '../search/bisect.js';
import type { CommitInfo } from '../executors/git.js';
import { z } from 'zod';
import { intervalSchema, type Interval } from '../domain/index.js';
import { base, round, type Chart } from './charts/spec.js';
import { esc, REPORT_CSP, STYLE } from './html.js';

const sha = z.string().regex(/^[0-9a-f]{4,64}$/, 'a commit sha');

/** A build of a commit (engine/bisect-commits.ts journals them in builds.jsonl, read back through this). */
export const bisectBuildSchema = z.object({
  commit: sha,
  ok: z.boolean(),
  /** Why it failed: the exit code or the timeout, and the tail of its output. */
  detail: z.string(),
  seconds: z.number(),
});
export type BisectBuild = z.infer<typeof bisectBuildSchema>;

/** What `bisect.json` holds: the search's result, the commits and the trials behind each step. */
export interface BisectFile {
  tunebench_bisect: 1;
  repo: string;
  good: CommitInfo;
  bad: CommitInfo;
  /** The commits after good up to bad, oldest first: what step indices count. */
  commits: string[];
  result: BisectResult;
  /** Journal indices of each step's trials, in the order of result.steps (a repeat's replayed rounds included). */
  step_trials: number[][];
  builds: BisectBuild[];
  /** The culprit's commit, or the range's commits (oldest first). */
  culprit: CommitInfo | null;
  range: CommitInfo[] | null;
  run_dir: string;
}

const commitInfoSchema = z.object({
  sha,
  subject: z.string(),
  author: z.string(),
  email: z.string(),
  date: z.string(),
});
const failureSchema = z.object({
  phase: z.enum(['build', 'run']),
  side: z.enum(['commit', 'good']),
  detail: z.string(),
});
const count = z.number().int().nonnegative();
const stepSchema = z.object({
  verdict: z.enum(['slower', 'same', 'undecided', 'skipped']),
  ratio: intervalSchema.nullable().optional(),
  pairs: z.array(z.number()).optional(),
  trials: count.optional(),
  rounds: count.optional(),
  band: z.number().optional(),
  failure: failureSchema.optional(),
  commit: sha,
  index: count,
  purpose: z.enum(['check', 'step']),
  attempt: z.union([z.literal(1), z.literal(2)]),
});
const outcomeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('culprit'), commit: sha, index: count, ratio: intervalSchema.nullable() }),
  z.object({
    kind: z.literal('range'),
    commits: z.array(sha),
    first: count,
    last: count,
    untestable: z.array(z.object({ commit: sha, index: count, why: z.enum(['skipped', 'undecided']) })),
    stopped: z.enum(['untestable', 'step-budget']),
    ratio: intervalSchema.nullable(),
  }),
  z.object({ kind: z.literal('no-culprit'), verdict: z.enum(['same', 'undecided']), ratio: intervalSchema.nullable() }),
  z.object({ kind: z.literal('unmeasurable'), commit: sha, failure: failureSchema.nullable() }),
]);

/** bisect.json as read back (tunebench report): every field checked, so a damaged file is refused by name. */
export const bisectFileSchema: z.ZodType<BisectFile> = z.object({
  tunebench_bisect: z.literal(1),
  repo: z.string(),
  good: commitInfoSchema,
  bad: commitInfoSchema,
  commits: z.array(sha),
  result: z.object({ outcome: outcomeSchema, steps: z.array(stepSchema), check: stepSchema }),
  step_trials: z.array(z.array(count)),
  builds: z.array(bisectBuildSchema),
  culprit: commitInfoSchema.nullable(),
  range: z.array(commitInfoSchema).nullable(),
  run_dir: z.string(),
});

const short = (sha: string) => sha.slice(0, 12);

/** A throughput ratio with its CI: "0.86x [0.82, 0.90]". */
export function fmtRatio(r: Interval | null | undefined): string {
  if (!r) return 'no ratio';
  return `${r.estimate.toFixed(2)}x [${r.low.toFixed(2)}, ${r.high.toFixed(2)}]`;
}

/** What a step found, after its commit: "slower 0.86x [0.82, 0.90] after 8 rounds". */
function stepFinding(step: BisectStep): string {
  if (step.verdict === 'skipped') {
    const f = step.failure;
    const who = f?.side === 'good' ? 'the good commit' : 'this commit';
    return f ? `skipped: ${who} failed to ${f.phase} (${f.detail.split('\n')[0]})` : 'skipped';
  }
  const rounds = step.rounds !== undefined ? ` after ${step.rounds} rounds` : '';
  return `${step.verdict} ${fmtRatio(step.ratio)}${rounds}`;
}

/** The progress line of a step: "step 3: c0a1b2c3d4e5 (commit 7 of 16) slower 0.86x [0.82, 0.90] after 8 rounds". */
export function stepLine(n: number, step: BisectStep, commits: number): string {
  const where =
    step.purpose === 'check' ? `the bad commit, ${commits} of ${commits}` : `commit ${step.index + 1} of ${commits}`;
  const repeat = step.attempt === 2 ? ', repeated with more rounds' : '';
  return `step ${n}: ${short(step.commit)} (${where}${repeat}) ${stepFinding(step)}`;
}

const who = (c: CommitInfo) => `${short(c.sha)} ${c.subject} (${c.author})`;

/** Journal indices as a short text: "trials 12-31". */
function trialsText(indices: readonly number[]): string {
  if (indices.length === 0) return 'no trials';
  const sorted = [...indices].sort((a, b) => a - b);
  const parts: string[] = [];
  let start = sorted[0]!;
  let prev = start;
  for (const i of [...sorted.slice(1), Number.NaN]) {
    if (i === prev + 1) {
      prev = i;
      continue;
    }
    parts.push(start === prev ? `${start}` : `${start}-${prev}`);
    start = i;
    prev = i;
  }
  return `trials ${parts.join(', ')}`;
}

/** The trials of the last step that measured `commit` (those that justify its verdict). */
function trialsOf(file: BisectFile, commit: string): number[] {
  const at = file.result.steps.map((s, i) => (s.commit === commit ? i : -1)).filter((i) => i >= 0);
  return at.length === 0 ? [] : file.step_trials[at.at(-1)!]!;
}

/** The answer, as printed and as the first line of bisect.md. */
export function answerLines(file: BisectFile): string[] {
  const o = file.result.outcome;
  switch (o.kind) {
    case 'culprit': {
      const c = file.culprit!;
      const parent = o.index === 0 ? file.good.sha : file.commits[o.index - 1]!;
      const parentTrials = o.index === 0 ? [] : trialsOf(file, parent);
      return [
        `first bad commit: ${who(c)}: ${fmtRatio(o.ratio)} against the good commit, ` +
          `${trialsText(trialsOf(file, o.commit))} of ${file.run_dir}/trials.jsonl` +
          (parentTrials.length > 0
            ? `; its parent ${short(parent)} measured the same (${trialsText(parentTrials)})`
            : ''),
      ];
    }
    case 'no-culprit':
      return [
        `no culprit: the bad commit is not slower than the good one (${fmtRatio(o.ratio)}` +
          `${o.verdict === 'undecided' ? ', undecided at the most rounds' : ''})`,
      ];
    case 'unmeasurable': {
      const f = o.failure;
      const side = f?.side === 'good' ? `the good commit ${short(file.good.sha)}` : `commit ${short(o.commit)}`;
      return [`no answer: ${side} could not be measured${f ? ` (${f.phase} failed: ${f.detail.split('\n')[0]})` : ''}`];
    }
    case 'range': {
      const why =
        o.stopped === 'step-budget'
          ? 'the step budget (--max-steps) ran out'
          : o.untestable
              .map((u) => `${short(u.commit)} ${u.why === 'skipped' ? 'was skipped' : 'stayed undecided'}`)
              .join(', ');
      return [
        `the first bad commit is one of ${o.commits.length} commits (${why}); the last of them is slower ${fmtRatio(o.ratio)}:`,
        ...(file.range ?? []).map((c) => `  ${who(c)}`),
      ];
    }
  }
}

/** One row per tested commit in history order: its last step's verdict and ratio. */
export function ratioRows(file: BisectFile): {
  position: number;
  commit: string;
  verdict: string;
  estimate: number | null;
  low: number | null;
  high: number | null;
}[] {
  const last = new Map<number, BisectStep>();
  for (const s of file.result.steps) last.set(s.index, s);
  return [...last.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, s]) => ({
      position: index + 1,
      commit: short(s.commit),
      verdict: s.verdict,
      estimate: round(s.ratio?.estimate),
      low: round(s.ratio?.low),
      high: round(s.ratio?.high),
    }));
}

/** The chart: each tested commit's throughput ratio to the good commit with its CI, in history order. */
export function bisectChart(file: BisectFile): Chart {
  const values = ratioRows(file);
  const x = {
    field: 'position',
    type: 'quantitative',
    title: 'commit after good (history order)',
    scale: { domain: [0, file.commits.length + 1] },
  };
  return {
    name: 'bisect-ratio',
    title: 'Throughput ratio to the good commit per tested commit',
    spec: {
      ...base(
        'Throughput ratio to the good commit',
        'Each tested commit against the good commit (below 1: slower), 95% CI',
      ),
      width: 560,
      height: 260,
      data: { values },
      layer: [
        { mark: { type: 'rule', strokeDash: [4, 4], color: '#888' }, encoding: { y: { datum: 1 } } },
        { mark: 'rule', encoding: { x, y: { field: 'low', type: 'quantitative' }, y2: { field: 'high' } } },
        {
          mark: { type: 'point', filled: true, size: 70 },
          encoding: {
            x,
            y: {
              field: 'estimate',
              type: 'quantitative',
              title: 'throughput ratio (commit / good)',
              scale: { zero: false },
            },
            color: { field: 'verdict', type: 'nominal' },
            tooltip: [
              { field: 'commit' },
              { field: 'verdict' },
              { field: 'estimate' },
              { field: 'low' },
              { field: 'high' },
            ],
          },
        },
      ],
    },
  };
}

/** bisect.md: the answer, the steps and the builds that failed. */
export function bisectMarkdown(file: BisectFile): string {
  const lines = [
    `# Bisect ${short(file.good.sha)}..${short(file.bad.sha)}`,
    '',
    ...answerLines(file),
    '',
    `Good: ${who(file.good)}. Bad: ${who(file.bad)}. ${file.commits.length} commits after good.`,
    '',
    '| step | commit | position | purpose | verdict | ratio [95% CI] | rounds | trials |',
    '|---|---|---|---|---|---|---|---|',
    ...file.result.steps.map(
      (s, i) =>
        `| ${i + 1} | ${short(s.commit)} | ${s.index + 1} of ${file.commits.length} | ${s.purpose}${s.attempt === 2 ? ' (repeat)' : ''} | ` +
        `${s.verdict} | ${s.ratio ? fmtRatio(s.ratio) : '-'} | ${s.rounds ?? '-'} | ${trialsText(file.step_trials[i] ?? [])} |`,
    ),
  ];
  const failed = file.builds.filter((b) => !b.ok);
  if (failed.length > 0)
    lines.push('', 'Builds that failed:', ...failed.map((b) => `- ${short(b.commit)}: ${b.detail.split('\n')[0]}`));
  return `${lines.join('\n')}\n`;
}

/** report.html of a bisection: the answer, the chart (drawn, or its spec named) and the steps. */
export function bisectHtml(file: BisectFile, svg: string | null): string {
  const rows = file.result.steps
    .map(
      (s, i) =>
        `<tr><td>${i + 1}</td><td><code>${esc(short(s.commit))}</code></td><td>${s.index + 1}</td><td>${esc(s.purpose)}` +
        `${s.attempt === 2 ? ' (repeat)' : ''}</td><td>${esc(s.verdict)}</td><td>${esc(s.ratio ? fmtRatio(s.ratio) : '-')}</td>` +
        `<td>${esc(trialsText(file.step_trials[i] ?? []))}</td></tr>`,
    )
    .join('\n');
  const chart =
    svg ??
    '<p>The chart is written as a spec: charts/bisect-ratio.vl.json (draw it with <code>tunebench report</code>).</p>';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">
<title>bisect ${esc(short(file.good.sha))}..${esc(short(file.bad.sha))}</title><style>${STYLE}</style></head><body>
<h1>Bisect ${esc(short(file.good.sha))}..${esc(short(file.bad.sha))}</h1>
<section id="bisect"><h2>Bisection</h2>
<div class="answer">${answerLines(file)
    .map((l) => `<p>${esc(l)}</p>`)
    .join('\n')}</div>
<figure>${chart}<figcaption>Throughput ratio of each tested commit to the good commit (below 1: slower), 95% CI, in history order.</figcaption></figure>
<table><tr><th>step</th><th>commit</th><th>position</th><th>purpose</th><th>verdict</th><th>ratio [95% CI]</th><th>trials</th></tr>
${rows}</table>
<p>Files: <a href="bisect.json">bisect.json</a>, <a href="bisect.md">bisect.md</a>, <a href="trials.jsonl">trials.jsonl</a>, <a href="run.json">run.json</a></p>
</section></body></html>
`;
}
