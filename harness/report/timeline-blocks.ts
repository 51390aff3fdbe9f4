// Where each trial's time went (its timeline), and a bracket session's in-process attempts, as report blocks.
import { roleText } from '../domain/index.js';
import { formatBytes } from '../experiment/units.js';
import { tableBlock, text, type Block } from './blocks.js';
import { figure } from './format.js';
import type { TrialRecord, TrialTimeline } from '../domain/index.js';

const PARTS: readonly (keyof TrialTimeline)[] = [
  'launch',
  'setup',
  'build',
  'warmup',
  'steps',
  'finish',
  'teardown',
  'after_exit',
];
const s = (v: number | null | undefined) => figure(v, (x) => x.toFixed(2));

/** One row per trial with a timeline: its phases in seconds, then the harness's own share and the rest. */
export function timelineBlocks(records: readonly TrialRecord[], param: string): Block[] {
  const timed = records.filter((r) => r.timeline);
  if (timed.length === 0) return [];
  const harness = timed.reduce((a, r) => a + r.timeline!.harness, 0);
  const wall = timed.reduce((a, r) => a + r.wall_seconds, 0);
  return [
    text(
      `Where the time went (seconds): the harness's own work (launch and cleanup) took ${harness.toFixed(2)} s of ` +
        `${wall.toFixed(1)} s of trials; "build" is the process's work before its first step (model, device context, loader).`,
    ),
    tableBlock(
      ['#', 'role', param, ...PARTS, 'harness', 'other', 'wall'],
      timed.map((r) => [
        r.index,
        roleText(r.role),
        String(r.config[param] ?? '-'),
        ...PARTS.map((p) => s(r.timeline![p])),
        s(r.timeline!.harness),
        s(r.timeline!.unaccounted),
        s(r.wall_seconds),
      ]),
    ),
  ];
}

/** A bracket session's attempts: each is a lower bound (a pass) or a hint (an OOM), never an answer. */
export function attemptBlocks(records: readonly TrialRecord[], param: string): Block[] {
  return records.flatMap((r) =>
    r.attempts && r.attempts.length > 0
      ? [
          text(
            `In-process bracket (trial ${r.index}): ${r.attempts.length} attempts in one process, ${r.wall_seconds.toFixed(1)} s in all. ` +
              'A pass there is a lower bound and an OOM only a hint: the max written and the failure above it ran in processes of their own.',
          ),
          tableBlock(
            ['attempt', param, 'outcome', 'peak memory', 'seconds'],
            r.attempts.map((a, i) => [
              i + 1,
              a.batch,
              a.outcome,
              figure(a.peak_bytes, formatBytes),
              a.seconds.toFixed(2),
            ]),
          ),
        ]
      : [],
  );
}
