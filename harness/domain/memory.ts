// Memory per step and whether it stopped growing: the rule a confirmation runs under, the series a
// trial records, and the verdict that decides whether a max batch is one that holds.
import { z } from 'zod';

const count = z.number().int().nonnegative();
const bytes = z.number().nonnegative();

/**
 * Run until memory flattens: at least `min_steps` steps (warm-up included) and past the first optimizer
 * step and an epoch boundary (when the workload reports epochs), until `window` readings bring no new
 * peak beyond `tolerance` of the peak; the trial is asked for its bound of steps and stopped at the plateau.
 */
export const plateauRuleSchema = z.object({
  min_steps: count,
  window: z.number().int().positive(),
  /** A new peak counts when it exceeds the peak before the window by more than this fraction (and 1 MiB). */
  tolerance: z.number().nonnegative(),
});
export type PlateauRule = z.infer<typeof plateauRuleSchema>;

/**
 * Where a step's memory came from: `workload` (the step event's memory_bytes: the process's peak,
 * CUDA's max_memory_allocated on a GPU), `cgroup` (the trial cgroup's peak usage when the harness read
 * the step) or `tree-rss` (the sampled peak RSS of the trial's process tree).
 */
export const MEMORY_SOURCES = ['workload', 'cgroup', 'tree-rss'] as const;
export type MemorySource = (typeof MEMORY_SOURCES)[number];

/** A trial's memory per step: `steps[i]` (0-based, warm-up included) had `bytes[i]`; steps without a reading are absent. */
export const memorySeriesSchema = z.object({
  source: z.enum(MEMORY_SOURCES),
  steps: z.array(count),
  bytes: z.array(bytes),
  /** Epoch of each reading's step (absent: the workload reports no epochs). */
  epochs: z.array(count).optional(),
});
export type MemorySeries = z.infer<typeof memorySeriesSchema>;

/** What a series does not show, when it shows neither a plateau nor growth. */
export const UNPROVEN_MISSING = ['memory', 'epoch-boundary', 'window'] as const;

/**
 * The verdict of a run under a plateau rule. plateau: no new peak for a window from `at_step` on.
 * growing: the last window still rose, by `bytes_per_step`, when the run ended (`at_bound`: at the
 * bound of steps it was given). unproven: neither could be seen (no memory per step, no epoch
 * boundary crossed, or the run ended before a whole window).
 */
export const memoryGrowthSchema = z.discriminatedUnion('verdict', [
  z.object({
    verdict: z.literal('plateau'),
    at_step: count,
    peak_bytes: bytes,
    source: z.enum(MEMORY_SOURCES),
    /** The cap's own measure of the run (a cgroup's peak of the whole tree), where the series is another reading. */
    cap_peak_bytes: bytes.optional(),
  }),
  z.object({
    verdict: z.literal('growing'),
    bytes_per_step: z.number(),
    /** The last step that was read (0-based). */
    at_step: count,
    at_bound: z.boolean(),
    peak_bytes: bytes,
    source: z.enum(MEMORY_SOURCES),
    cap_peak_bytes: bytes.optional(),
  }),
  z.object({ verdict: z.literal('unproven'), missing: z.enum(UNPROVEN_MISSING), steps: count }),
]);
export type MemoryGrowth = z.infer<typeof memoryGrowthSchema>;
