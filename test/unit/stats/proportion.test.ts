// The Wilson interval of a proportion against values computed by hand from the formula.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalQuantile, wilsonInterval } from '../../../harness/stats/proportion.js';

const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-7, `${a} != ${b}`);

describe('wilsonInterval', () => {
  it('matches known values', () => {
    const a = wilsonInterval(5, 100);
    close(a.low, 0.02154367915436796);
    close(a.high, 0.11175046923191913);
    assert.equal(a.estimate, 0.05);
    assert.equal(a.level, 0.95);
    const b = wilsonInterval(20, 400);
    close(b.low, 0.03259742983714726);
    close(b.high, 0.07596363506371961);
  });

  it('stays inside [0, 1] at the ends', () => {
    const none = wilsonInterval(0, 400);
    assert.equal(none.low, 0);
    close(none.high, 0.009512294334296508);
    const all = wilsonInterval(10, 10);
    assert.equal(all.high, 1);
    close(all.low, 0.7224672001371107);
  });

  it('uses an accurate normal quantile', () => {
    close(normalQuantile(0.975), 1.959963984540054);
    close(normalQuantile(0.005), -2.5758293035489);
    close(normalQuantile(0.5), 0);
  });

  it('rejects counts that are not a proportion', () => {
    assert.throws(() => wilsonInterval(3, 2), /0 <= successes <= n/);
    assert.throws(() => wilsonInterval(0, 0), /n >= 1/);
  });
});
