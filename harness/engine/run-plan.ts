// About how many trials each stage of an experiment runs, from its spec alone: what the progress line's
// whole-run ETA multiplies by the trials' measured time (a sweep: configs x rounds; a race: about halfway
// between its first look and its most rounds; a compare: its first rounds; a claim: about half its pairs).
import type { Experiment } from '../experiment/schema.js';
import { gridSize } from '../search/space.js';
import { SWEEP_REPEATS } from '../experiment/schema/stages.js';

type StageSpec = Experiment['stages'][number];

export function plannedTrials(stage: StageSpec): number {
  switch (stage.kind) {
    case 'max-batch':
      return (
        10 +
        (stage.confirm_steps > 0 ? 1 : 0) +
        2 * stage.repeat_boundary +
        stage.throughput_points +
        (stage.choose === 'max' ? 0 : 1)
      );
    case 'sweep': {
      const configs = gridSize(stage.params).total;
      const most = stage.repeats ?? SWEEP_REPEATS[stage.strategy];
      const rounds = stage.strategy === 'grid' ? most : (stage.min_rounds + most) / 2;
      return Math.ceil(configs * rounds);
    }
    case 'compare':
      return stage.arms.length * stage.repeats;
    case 'claim':
      return stage.max_pairs;
  }
}
