// Loads an experiment file (YAML or JSON), validates it against the schema and resolves relative paths.
import { readFileSync } from 'node:fs';
import { dirname, extname, isAbsolute, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigError } from '../errors.js';
import { checkExperiment } from './checks.js';
import { experimentSchema, type Experiment } from './schema.js';
import type { Issue } from './schema-kit.js';

export interface LoadedExperiment {
  experiment: Experiment;
  /** Absolute path of the file, or '<inline>' */
  source: string;
  /** The file's text, kept in run.json so a run documents exactly what it ran. */
  text: string;
}

export function loadExperiment(path: string): LoadedExperiment {
  const source = resolve(path);
  let text: string;
  try {
    text = readFileSync(source, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : String(error);
    throw new ConfigError(`cannot read experiment file ${path}: ${why}`, [], { cause: error });
  }
  return { experiment: parseExperimentText(text, source), source, text };
}

/** Parses and validates experiment text; relative model paths resolve against the file's directory. */
export function parseExperimentText(text: string, source: string, format?: 'json' | 'yaml'): Experiment {
  const raw = parseRaw(text, source, format);
  const issues: Issue[] = [];
  const experiment = experimentSchema.parse(raw, '', issues);
  if (!experiment || issues.length > 0) {
    const lines = issues.map((i) => `  ${i.path || '(top level)'}: ${i.message}`);
    throw new ConfigError(`${source}: invalid experiment (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${lines.join('\n')}`, issues);
  }
  checkExperiment(experiment, source);
  if (experiment.workload.kind === 'onnx') {
    const model = experiment.workload.model;
    if ('path' in model && !isAbsolute(model.path)) model.path = resolve(dirname(source), model.path);
  }
  return experiment;
}

function parseRaw(text: string, source: string, format?: 'json' | 'yaml'): unknown {
  if (format === 'json' || (format === undefined && extname(source).toLowerCase() === '.json')) {
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new ConfigError(`${source}: not valid JSON: ${(error as Error).message}`, [], { cause: error });
    }
  }
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    throw new ConfigError(`${source}: not valid YAML: ${first.message}`, [], { cause: first });
  }
  const value: unknown = doc.toJS();
  if (value === null || value === undefined) throw new ConfigError(`${source}: the file is empty; an experiment needs at least name, workload and stages`);
  return value;
}
