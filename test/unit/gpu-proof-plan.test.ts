// The GPU proof kit's budgets against the records of a real card: every step's recorded costs within
// (1 - spare) of its budget, and the default steps within the kit's total (gpu-proof/plan.json).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../support/paths.js';
import { h200Quantities } from '../support/h200-replay.js';

interface Cost {
  what: string;
  times?: number | string;
  each?: Record<string, number>;
  seconds?: number;
  plus_steps?: string;
}
interface Plan {
  records: string;
  total_budget_s: number;
  spare: number;
  settings: Record<string, number>;
  steps: { name: string; budget_s: number; default: boolean; costs: Cost[] }[];
}

const plan = JSON.parse(readFileSync(join(ROOT, 'gpu-proof', 'plan.json'), 'utf8')) as Plan;

/** A step's costs in seconds, item by item, from the recorded quantities and the plan's settings. */
function stepCosts(costs: readonly Cost[], q: Record<string, number>, settings: Record<string, number>): number[] {
  const value = (v: number | string | undefined, fallback: number) =>
    v === undefined ? fallback : typeof v === 'number' ? v : settings[v]!;
  return costs.map((c) => {
    for (const name of Object.keys(c.each ?? {})) assert.ok(name in q, `${c.what}: no recorded quantity "${name}"`);
    const each =
      Object.entries(c.each ?? {}).reduce((a, [name, n]) => a + n * q[name]!, 0) +
      (c.seconds ?? 0) +
      value(c.plus_steps, 0) * q['step_at_max']!;
    return value(c.times, 1) * each;
  });
}

describe('the GPU proof kit plan', () => {
  const q = h200Quantities();

  it('is costed from the records of the card it names', () => {
    assert.equal(plan.records, 'h200-2026-11-28');
    // The recorded quantities themselves: a probe spent ~7 s outside its steps, imports ~5 s.
    assert.ok(q['process']! > 6 && q['process']! < 8, `process ${q['process']}`);
    assert.equal(q['import'], 5.3);
    assert.equal(q['lightning'], 39.35);
  });

  for (const step of plan.steps) {
    it(`${step.name}: its recorded costs leave ${plan.spare * 100}% of its ${step.budget_s} s to spare`, () => {
      const costs = stepCosts(step.costs, q, plan.settings);
      const sum = costs.reduce((a, b) => a + b, 0);
      const detail = step.costs.map((c, i) => `${costs[i]!.toFixed(1)} s ${c.what}`).join('; ');
      assert.ok(sum <= (1 - plan.spare) * step.budget_s, `${sum.toFixed(1)} s of ${step.budget_s} s: ${detail}`);
    });
  }

  it(`runs its default steps within ${plan.total_budget_s} s, and the script runs the plan's steps`, () => {
    const total = plan.steps.filter((s) => s.default).reduce((a, s) => a + s.budget_s, 0);
    assert.ok(total <= plan.total_budget_s, `${total} s of budgets`);
    const script = readFileSync(join(ROOT, 'scripts', 'gpu-proof.sh'), 'utf8');
    for (const s of plan.steps) assert.match(script, new RegExp(`\\b${s.name.replace('-', '_')}\\(\\) \\{`), s.name);
  });
});
