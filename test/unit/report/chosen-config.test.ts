// The chosen config's three files carry the same values, and the .env file is shell-safe.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { buildChosenConfig, writeChosenConfig } from '../../../harness/report/chosen-config.js';
import { fingerprint } from '../../../harness/telemetry/fingerprint.js';
import { tempDir } from '../../support/paths.js';

describe('chosen config files', () => {
  it('agree with each other and survive shell quoting', () => {
    const dir = tempDir();
    const config = { batch_size: 4096, arena: 'keep', tricky: "it's $HOME `x`" };
    const chosen = buildChosenConfig({ experiment: 'e', runId: 'r1', config, evidence: {}, fingerprint: fingerprint(), memoryLimit: 1e9, experimentPath: 'exp.yaml' });
    writeChosenConfig(dir, chosen);
    const json = JSON.parse(readFileSync(join(dir, 'chosen-config.json'), 'utf8')) as { config: unknown };
    const yaml = parse(readFileSync(join(dir, 'chosen-config.yaml'), 'utf8')) as { config: unknown };
    assert.deepEqual(json.config, config);
    assert.deepEqual(yaml.config, config);
    const out = execFileSync('bash', ['-c', `set -a; . "${join(dir, 'chosen-config.env')}"; printf '%s\\n%s\\n%s' "$TUNEBENCH_BATCH_SIZE" "$TUNEBENCH_TRICKY" "$TUNEBENCH_CONFIG"`]).toString();
    const [batch, tricky, whole] = out.split('\n');
    assert.equal(batch, '4096');
    assert.equal(tricky, config.tricky);
    assert.deepEqual(JSON.parse(whole!), config);
  });
});
