// The problems that validation finds in an experiment's text, as "path: message" lines ([] when valid).
import assert from 'node:assert/strict';
import { ConfigError } from '../../harness/errors.js';
import { parseExperimentText } from '../../harness/engine/load.js';

export function experimentIssues(text: string): string[] {
  try {
    parseExperimentText(text, '/x/exp.yaml');
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues.map((i) => `${i.path}: ${i.message}`);
  }
  return [];
}
