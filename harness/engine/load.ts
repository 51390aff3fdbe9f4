// Loading an experiment with every stage kind's checks (engine/kinds/): the experiment layer's loaders,
// handed the table of kinds, under the names the rest of tunebench calls them by.
import { loadExperimentWith, parseExperimentTextWith, type LoadedExperiment } from '../experiment/load.js';
import {
  claimExperimentWith,
  timeExperimentWith,
  type ClaimRequest,
  type TimeRequest,
} from '../experiment/one-liner.js';
import type { Experiment } from '../experiment/schema.js';
import { STAGE_KIND_MODULES } from './kinds/index.js';

/** Reads and validates an experiment file (see experiment/load.ts). */
export function loadExperiment(path: string): LoadedExperiment {
  return loadExperimentWith(path, STAGE_KIND_MODULES);
}

/** Parses and validates experiment text; relative model paths resolve against the file's directory. */
export function parseExperimentText(text: string, source: string, format?: 'json' | 'yaml'): Experiment {
  return parseExperimentTextWith(text, source, STAGE_KIND_MODULES, format);
}

/** The experiment of a `tunebench time` command line (see experiment/one-liner.ts). */
export function timeExperiment(req: TimeRequest): ReturnType<typeof timeExperimentWith> {
  return timeExperimentWith(req, STAGE_KIND_MODULES);
}

/** The experiment of a `tunebench claim` command line (see experiment/one-liner.ts). */
export function claimExperiment(req: ClaimRequest): Experiment {
  return claimExperimentWith(req, STAGE_KIND_MODULES);
}
