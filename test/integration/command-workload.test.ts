// The command workload with small fixture programs: the protocol, timeouts, and no shell anywhere.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runTrial, type TrialContext } from '../../harness/trial/run-trial.js';
import { CommandWorkload, type CommandSpec } from '../../harness/workloads/command/workload.js';
import { PROGRAMS, tempDir } from '../support/paths.js';
import { requireSystem } from '../support/system.js';
import type { Config } from '../../harness/domain/index.js';

function context(command: string[], extra: Partial<CommandSpec> = {}, timeout = 20): TrialContext {
  const workload = new CommandWorkload({ kind: 'command', command, ...extra }, PROGRAMS);
  return { workload, limits: { mechanism: 'auto', timeout }, scratchDir: tempDir() };
}

const node = process.execPath;
const run = (ctx: TrialContext, config: Config = { batch_size: 8 }) =>
  runTrial(ctx, { index: 0, stage: 's', role: { kind: 'probe' }, config, measure: { warmupSteps: 0, steps: 2 } });

describe('command workload', () => {
  it('times a program that ignores the protocol as a whole process', async () => {
    const r = await run(context([node, 'no-events.mjs']));
    assert.equal(r.outcome, 'ok');
    assert.equal(r.steps.length, 1);
    assert.equal(r.steps[0]!.samples, 8);
    assert.ok(r.steps[0]!.seconds >= 0.15, 'the whole process, start-up included');
    assert.equal(r.reason, 'exited 0 (no events: whole-process timing)');
  });

  it('keeps the steps reported before a crash', async () => {
    const r = await run(context([node, 'events-then-crash.mjs']));
    assert.equal(r.outcome, 'crash');
    assert.equal(r.steps.length, 2);
    assert.match(r.stderr_tail, /shape mismatch in layer 3/);
  });

  it('classifies an oom event', async () => {
    assert.equal((await run(context([node, 'reports-oom.mjs']))).outcome, 'oom');
  });

  it('kills a hanging program and the grandchild it forked', async () => {
    const pidFile = join(tempDir(), 'pids.json');
    const r = await run(context([node, 'hangs.mjs'], { env: { FIXTURE_PID_FILE: pidFile } }, 1.5));
    assert.equal(r.outcome, 'timeout');
    const pids = JSON.parse(readFileSync(pidFile, 'utf8')) as { child: number; grandchild: number };
    await new Promise((res) => setTimeout(res, 300));
    for (const pid of [pids.child, pids.grandchild]) assert.throws(() => process.kill(pid, 0), `pid ${pid} is gone`);
  });

  it('counts garbage event lines: whole-process timing when optional, invalid when required', async () => {
    const optional = await run(context([node, 'garbage-events.mjs']));
    assert.equal(optional.outcome, 'ok');
    assert.equal(optional.malformed_events, 4);
    const required = await run(context([node, 'garbage-events.mjs'], { protocol: 'required' }));
    assert.equal(required.outcome, 'invalid');
  });

  it('keeps only the tail of a huge stderr', async () => {
    const r = await run(context([node, 'huge-stderr.mjs']));
    assert.equal(r.outcome, 'crash');
    assert.ok(r.stderr_tail.length <= 8 * 1024);
    assert.ok(r.stderr_tail.endsWith('fixture: the last line\n'));
  });

  it('passes values as literal arguments: no shell, no injection', async () => {
    const echo = join(tempDir(), 'echo.json');
    const marker = join(tempDir(), 'pwned');
    const hostile = `; touch ${marker}`;
    const r = await run(
      context([node, 'argv-echo.mjs', '--tag={tag}', '{tag}', '--id=$(id)'], { env: { ECHO_FILE: echo } }),
      { batch_size: 4, tag: hostile },
    );
    assert.equal(r.outcome, 'ok', r.reason);
    const seen = JSON.parse(readFileSync(echo, 'utf8')) as { argv: string[]; env: Record<string, string> };
    assert.deepEqual(seen.argv, [`--tag=${hostile}`, hostile, '--id=$(id)']);
    assert.equal(seen.env['TUNEBENCH_TAG'], hostile);
    assert.equal(existsSync(marker), false, 'nothing ran');
  });

  it('sets the protocol environment, extra env, working directory and PYTHONPATH', async () => {
    const echo = join(tempDir(), 'echo.json');
    const cwd = tempDir();
    const r = await run(
      context([node, join(PROGRAMS, 'argv-echo.mjs')], { env: { ECHO_FILE: echo, EXTRA: 'yes' }, cwd }),
      { batch_size: 16, pin_memory: true },
    );
    assert.equal(r.outcome, 'ok');
    const seen = JSON.parse(readFileSync(echo, 'utf8')) as { cwd: string; env: Record<string, string> };
    assert.equal(seen.cwd, cwd);
    assert.deepEqual(JSON.parse(seen.env['TUNEBENCH_CONFIG']!), { batch_size: 16, pin_memory: true });
    assert.equal(seen.env['TUNEBENCH_BATCH_SIZE'], '16');
    assert.equal(seen.env['TUNEBENCH_PIN_MEMORY'], 'true');
    assert.equal(seen.env['TUNEBENCH_STEPS'], '2');
    assert.equal(seen.env['EXTRA'], 'yes');
    assert.match(seen.env['PYTHONPATH']!, /harness\/workloads\/python/);
    assert.equal(r.steps[0]!.samples, 16);
  });

  it(
    'runs a .py script under the named interpreter, and "{python}" in an argument',
    {
      skip: requireSystem('python3'),
    },
    async () => {
      const direct = await run(context(['events.py', '--flag'], { python: '/usr/bin/python3' }));
      assert.equal(direct.outcome, 'ok', direct.reason + direct.stderr_tail);
      assert.equal(direct.steps[0]!.samples, 8);
      const templated = await run(context(['{python}', 'events.py'], { python: '/usr/bin/python3' }));
      assert.equal(templated.outcome, 'ok', templated.reason + templated.stderr_tail);
    },
  );

  it('reports a program that does not exist as a harness-level error naming it', async () => {
    await assert.rejects(run(context(['/no/such/program'])), /could not start "\/no\/such\/program"/);
  });
});
