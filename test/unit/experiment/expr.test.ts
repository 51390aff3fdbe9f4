// The constraint expression language.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evaluate, names, parseExpr } from '../../../harness/experiment/expr.js';

describe('expressions', () => {
  it('respects precedence and parentheses', () => {
    assert.equal(evaluate(parseExpr('2 + 3 * 4'), {}), 14);
    assert.equal(evaluate(parseExpr('(2 + 3) * 4'), {}), 20);
    assert.equal(evaluate(parseExpr('-a + b / 2'), { a: 1, b: 5 }), 1.5);
    assert.equal(evaluate(parseExpr('10 - 4 - 3'), {}), 3);
  });
  it('binds names, booleans as 0/1, and lists the names used', () => {
    assert.equal(evaluate(parseExpr('num_workers * (1 + pin)'), { num_workers: 3, pin: true }), 6);
    assert.deepEqual(names(parseExpr('a * b + a')).sort(), ['a', 'b']);
  });
  it('explains syntax and binding errors', () => {
    assert.throws(() => parseExpr('a +'), /ends too early/);
    assert.throws(() => parseExpr('a $ b'), /unexpected "\$" at position 3/);
    assert.throws(() => parseExpr('(a + b'), /expected "\)"/);
    assert.throws(() => evaluate(parseExpr('x + 1'), { x: 'fast' }), /"x" has no numeric value/);
  });
});
