// Sizes and durations as people write them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatBytes, formatSeconds, parseDuration, parseSize } from '../../../harness/experiment/units.js';

describe('units', () => {
  it('parses sizes in SI and binary units', () => {
    assert.equal(parseSize('2.5GiB'), 2.5 * 2 ** 30);
    assert.equal(parseSize('800MB'), 800e6);
    assert.equal(parseSize('64 kib'), 65536);
    assert.equal(parseSize(1024), 1024);
    for (const bad of ['lots', '2 GB extra', '-1GB', '0B', 0, -5])
      assert.equal(parseSize(bad as string), undefined, String(bad));
  });
  it('parses durations', () => {
    assert.equal(parseDuration('90s'), 90);
    assert.equal(parseDuration('2m'), 120);
    assert.equal(parseDuration('50ms'), 0.05);
    assert.equal(parseDuration('1h'), 3600);
    assert.equal(parseDuration(1.5), 1.5);
    for (const bad of ['soon', '5 days', -1, 0]) assert.equal(parseDuration(bad as string), undefined, String(bad));
  });
  it('formats for people', () => {
    assert.equal(formatBytes(1536), '1.50 KiB');
    assert.equal(formatBytes(2.5 * 2 ** 30), '2.50 GiB');
    assert.equal(formatSeconds(0.0123), '12.3 ms');
    assert.equal(formatSeconds(42), '42.0 s');
    assert.equal(formatSeconds(125), '2m05s');
  });
});
