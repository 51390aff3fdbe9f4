// A max-batch confirmation runs until memory stops growing: the trial it asks for (the bound of steps,
// epochs as long as a fixed-length confirmation's, the plateau rule) and its verdict in words.
import { formatBytes } from '../experiment/units.js';
import type { MemoryGrowth, PlateauRule } from '../domain/index.js';

/** Readings without a new peak that make a plateau. */
export const PLATEAU_WINDOW = 10;
/** A new peak counts when it exceeds the peak before the window by more than this fraction (and 1 MiB). */
export const PLATEAU_TOLERANCE = 0.002;

export interface ConfirmationSpec {
  warmupSteps: number;
  /** The timed steps the confirmation runs at least (confirm_steps). */
  minSteps: number;
  /** The timed steps it may run at most (confirm_max_steps). */
  maxSteps: number;
  /** Epochs a confirmation of minSteps spans (confirm_epochs). */
  epochs: number;
}

/**
 * The trial of a confirmation: asked for the bound of steps, in epochs as long as those of a
 * minSteps run (so the first epoch boundary comes as early as it would there, and more follow),
 * and stopped by the harness once memory has flattened.
 */
export function confirmationMeasure(c: ConfirmationSpec): {
  warmupSteps: number;
  steps: number;
  epochs?: number;
  plateau: PlateauRule;
} {
  const bound = Math.max(c.maxSteps, c.minSteps);
  const perEpoch = Math.ceil((c.warmupSteps + c.minSteps) / c.epochs);
  const epochs = Math.ceil((c.warmupSteps + bound) / perEpoch);
  return {
    warmupSteps: c.warmupSteps,
    steps: bound,
    ...(c.epochs > 1 ? { epochs } : {}),
    plateau: { min_steps: c.warmupSteps + c.minSteps, window: PLATEAU_WINDOW, tolerance: PLATEAU_TOLERANCE },
  };
}

/** Whether a verdict makes a max one that holds. */
export const holds = (g: MemoryGrowth | null | undefined): boolean => g?.verdict === 'plateau';

/** "+1.7 MiB/step": one decimal is enough for a rate. */
const perStep = (b: number): string => `${b >= 0 ? '+' : ''}${formatBytes(b).replace(/(\.\d)\d /, '$1 ')}/step`;

/** "memory plateau at step 24 (peak 1.2 GiB)", "memory still growing +1.7 MiB/step at the bound (200 steps)". */
export function growthPhrase(g: MemoryGrowth): string {
  switch (g.verdict) {
    case 'plateau':
      return `memory plateau at step ${g.at_step + 1} (${peakPhrase(g)})`;
    case 'growing':
      return g.at_bound
        ? `memory still growing ${perStep(g.bytes_per_step)} at the bound (${g.at_step + 1} steps${capPeak(g)})`
        : `memory still growing ${perStep(g.bytes_per_step)} when the workload stopped after ${g.at_step + 1} steps${capPeak(g)}`;
    case 'unproven':
      return {
        memory: `memory per step not measured in ${g.steps} steps`,
        'epoch-boundary': `no epoch boundary crossed in ${g.steps} steps`,
        window: `ended after ${g.steps} steps, before memory could be seen to flatten`,
      }[g.missing];
  }
}

/**
 * The run's peak as the cap measures it: under a cgroup the peak of the whole tree, with the workload's own
 * reading (its main process) beside it when that is what the plateau was judged on.
 */
function peakPhrase(g: Extract<MemoryGrowth, { peak_bytes: number }>): string {
  if (g.cap_peak_bytes === undefined) return `peak ${formatBytes(g.peak_bytes)}`;
  return `cgroup peak ${formatBytes(g.cap_peak_bytes)}; the workload's own reading ${formatBytes(g.peak_bytes)}`;
}

const capPeak = (g: { cap_peak_bytes?: number | undefined }) =>
  g.cap_peak_bytes === undefined ? '' : `; cgroup peak ${formatBytes(g.cap_peak_bytes)}`;

/** Why a confirmed-length run at `batch` is not a max that holds, and what to change; undefined when it holds. */
export function growthNote(batch: number, g: MemoryGrowth): string | undefined {
  if (g.verdict === 'plateau') return undefined;
  const head = `batch ${batch}: ${growthPhrase(g)}, so it is not called a max that holds`;
  if (g.verdict === 'growing')
    return g.at_bound
      ? `${head}: raise confirm_max_steps to see whether it flattens, or find what grows each step ` +
          '(tensors kept across steps, such as a list of losses, or a growing cache)'
      : `${head}: the workload stopped before the steps it was given (TUNEBENCH_STEPS); let it run them`;
  const fix = {
    memory:
      "report memory_bytes in step events (the Python adapter's StepTimer does), or run under a cgroup cap " +
      '(limits.mechanism: auto) so the harness can read it',
    'epoch-boundary':
      'let timer.batches() split the trial into the TUNEBENCH_TRIAL_EPOCHS it is given, or raise confirm_max_steps',
    window: 'let the workload run the steps it is given (TUNEBENCH_STEPS), or raise confirm_max_steps',
  }[g.missing];
  return `${head}: ${fix}`;
}
