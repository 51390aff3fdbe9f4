// The SLURM coordinator's decisions for one array task, without a cluster: each branch of the poll
// loop (record there, given up, stopped, unsubmitted, queued, finished without a record, retries
// used up), with the waits, the notes and the reasons it gives.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { givenUpRecord, type TaskResult } from '../../../harness/executors/slurm/batch.js';
import {
  COMPLETED_GRACE_POLLS,
  FIRST_DELAY,
  firstPoll,
  nextAction,
  type Action,
  type Poll,
  type Policy,
  type TaskView,
} from '../../../harness/executors/slurm/next-action.js';

const spec = {
  stage: 'loader',
  role: { kind: 'grid' as const },
  config: { num_workers: 2 },
  measure: { warmupSteps: 1, steps: 3 },
};
const record = givenUpRecord(spec, 7, 'a record the task wrote');
const policy: Policy = { retries: 1, poll: 30, noWait: false };

/** Task 12_3, trial 7, submitted once, nothing written yet, SLURM not asked yet. */
function view(over: Partial<TaskView> = {}): TaskView {
  return {
    trial: 7,
    result: { kind: 'none' },
    givenUp: null,
    stopped: false,
    job: { id: '12', task: '12_3' },
    attempts: 1,
    state: null,
    log: null,
    ...over,
  };
}

function act(over: Partial<TaskView>, poll: Poll = firstPoll(), p: Policy = policy): Action {
  return nextAction(view(over), poll, p);
}

function expectKind<K extends Action['kind']>(a: Action, kind: K): Extract<Action, { kind: K }> {
  assert.equal(a.kind, kind, JSON.stringify(a));
  return a as Extract<Action, { kind: K }>;
}

const damaged: TaskResult = {
  kind: 'damaged',
  problem:
    '/run/slurm/b0/task-3.json:4: the result file of a SLURM array task ' +
    'does not have the shape tunebench writes at field "outcome": expected one of ...',
};

describe('nextAction: what the coordinator does next for an array task', () => {
  it('collects the record as soon as it is there, whatever SLURM says', () => {
    for (const state of [null, 'RUNNING', 'COMPLETED', 'FAILED', 'UNKNOWN']) {
      const a = expectKind(act({ result: { kind: 'record', record }, state, stopped: true }), 'collect');
      assert.equal(a.record, record);
    }
  });

  it('hands back a crash for a task given up earlier, without asking SLURM', () => {
    assert.deepEqual(act({ givenUp: 'SLURM task 12_3 ended FAILED after 2 attempt(s)' }), {
      kind: 'crash',
      reason: 'SLURM task 12_3 ended FAILED after 2 attempt(s)',
    });
  });

  it('stops when the coordinator was stopped, and submits a task that no submission covers', () => {
    assert.equal(act({ stopped: true }).kind, 'stop');
    assert.equal(act({ job: null }).kind, 'submit');
  });

  it('asks SLURM for the state of the latest submission before deciding', () => {
    assert.deepEqual(act({}), { kind: 'query', job: '12', task: '12_3' });
  });

  it('waits while the task is pending or running, backing off 1.5 times per poll up to `poll`, without notes', () => {
    let poll = firstPoll();
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) {
      const a = expectKind(act({ state: i % 2 ? 'RUNNING' : 'PENDING' }, poll, { ...policy, poll: 3 }), 'wait');
      assert.deepEqual(a.notes, []);
      waits.push(a.seconds);
      poll = a.poll;
    }
    assert.equal(waits[0], FIRST_DELAY);
    assert.equal(waits[1], FIRST_DELAY * 1.5);
    assert.equal(waits.at(-1), 3);
    assert.ok(waits.every((w, i) => i === 0 || w >= waits[i - 1]!));
  });

  it('notes an unusual state once (a preempted task waits to run again)', () => {
    const first = expectKind(act({ state: 'PREEMPTED' }), 'wait');
    assert.deepEqual(first.notes, ['task 12_3 (trial 7) is PREEMPTED: waiting for it to run again']);
    assert.equal(first.poll.lastState, 'PREEMPTED');
    assert.deepEqual(expectKind(act({ state: 'PREEMPTED' }, first.poll), 'wait').notes, []);
    assert.deepEqual(expectKind(act({ state: 'SUSPENDED' }, first.poll), 'wait').notes, [
      'task 12_3 (trial 7) is SUSPENDED',
    ]);
  });

  it('with --no-wait returns while the task is queued or running', () => {
    assert.deepEqual(act({ state: 'PENDING' }, firstPoll(), { ...policy, noWait: true }), {
      kind: 'detach',
      job: '12',
      notes: [],
    });
    assert.deepEqual(act({ state: 'REQUEUED' }, firstPoll(), { ...policy, noWait: true }), {
      kind: 'detach',
      job: '12',
      notes: ['task 12_3 (trial 7) is REQUEUED'],
    });
  });

  it(
    'gives a COMPLETED task whose record does not show yet a few short polls (the shared filesystem), ' +
      'then submits it again',
    () => {
      let poll: Poll = { ...firstPoll(), delay: 20 };
      for (let i = 0; i < COMPLETED_GRACE_POLLS; i++) {
        const a = expectKind(act({ state: 'COMPLETED' }, poll), 'wait');
        assert.equal(a.seconds, 2, 'short waits, whatever the backoff');
        assert.deepEqual(a.notes, i === 0 ? ['task 12_3 (trial 7) is COMPLETED'] : []);
        assert.equal(a.poll.graceLeft, COMPLETED_GRACE_POLLS - i - 1);
        poll = a.poll;
      }
      const again = expectKind(act({ state: 'COMPLETED' }, poll), 'resubmit');
      assert.deepEqual(again.notes, [
        'task 12_3 (trial 7) ended COMPLETED without a record; submitting it again (attempt 2 of 2)',
      ]);
      // The next attempt starts with fresh waits.
      assert.deepEqual(
        { delay: again.poll.delay, graceLeft: again.poll.graceLeft },
        { delay: FIRST_DELAY, graceLeft: COMPLETED_GRACE_POLLS },
      );
    },
  );

  it('submits a failed task again at once while retries allow: node failure, timeout, out of memory, cancelled', () => {
    for (const state of ['NODE_FAIL', 'TIMEOUT', 'OUT_OF_MEMORY', 'CANCELLED', 'FAILED', 'BOOT_FAIL']) {
      const a = expectKind(act({ state }), 'resubmit');
      assert.deepEqual(a.notes, [
        `task 12_3 (trial 7) is ${state}`,
        `task 12_3 (trial 7) ended ${state} without a record; submitting it again (attempt 2 of 2)`,
      ]);
    }
    // Retries 3: the third attempt is still submitted again.
    assert.match(
      expectKind(act({ state: 'TIMEOUT', attempts: 3 }, firstPoll(), { ...policy, retries: 3 }), 'resubmit').notes.at(
        -1,
      )!,
      /attempt 4 of 4\)$/,
    );
  });

  it(
    'a task that vanished from the queue unseen (UNKNOWN) gets the grace polls, ' +
      'then is submitted again with the likely causes',
    () => {
      const poll: Poll = { ...firstPoll(), graceLeft: 0 };
      const a = expectKind(act({ state: 'UNKNOWN' }, poll), 'resubmit');
      assert.match(
        a.notes.at(-1)!,
        new RegExp(
          '^task 12_3 \\(trial 7\\) ended UNKNOWN \\(it left the queue, and neither sacct nor scontrol knows ' +
            'its final state: accounting is disabled, or it was cancelled before it started\\) without a record; ' +
            'submitting it again \\(attempt 2 of 2\\)$',
        ),
      );
      assert.equal(expectKind(act({ state: 'UNKNOWN' }), 'wait').poll.graceLeft, COMPLETED_GRACE_POLLS - 1);
    },
  );

  it('gives up once retries are used up, with a reason naming the task, the state, the attempts and the log', () => {
    const a = expectKind(act({ state: 'CANCELLED', attempts: 2, log: '/run/slurm/b0/slurm-12_3.log' }), 'give-up');
    assert.equal(
      a.reason,
      'SLURM task 12_3 ended CANCELLED after 2 attempt(s) ' +
        'without writing a trial record (log: /run/slurm/b0/slurm-12_3.log)',
    );
    assert.deepEqual(a.notes, ['task 12_3 (trial 7) is CANCELLED', `${a.reason}; it is recorded as a crash`]);
    // Retries 0: the first failure is final; no log, no mention of one.
    const once = expectKind(
      act({ state: 'TIMEOUT' }, { ...firstPoll(), lastState: 'TIMEOUT' }, { ...policy, retries: 0 }),
      'give-up',
    );
    assert.equal(once.reason, 'SLURM task 12_3 ended TIMEOUT after 1 attempt(s) without writing a trial record');
    assert.deepEqual(once.notes, [`${once.reason}; it is recorded as a crash`]);
  });

  it(
    'a damaged or foreign result file is a task that failed: ' + 'retried, then given up, saying which file and field',
    () => {
      // While the task is queued again the old file is left alone: the new attempt replaces it.
      assert.equal(act({ result: damaged, state: 'PENDING' }).kind, 'wait');
      const again = expectKind(
        act({ result: damaged, state: 'COMPLETED' }, { ...firstPoll(), graceLeft: 0 }),
        'resubmit',
      );
      assert.match(
        again.notes.at(-1)!,
        /submitting it again \(attempt 2 of 2\); its result file cannot be used: \/run\/slurm\/b0\/task-3\.json:4: .* at field "outcome"/,
      );
      const last = expectKind(
        act({ result: damaged, state: 'COMPLETED', attempts: 2 }, { ...firstPoll(), graceLeft: 0 }),
        'give-up',
      );
      assert.match(
        last.reason,
        /^SLURM task 12_3 ended COMPLETED after 2 attempt\(s\) without writing a trial record; its result file cannot be used: \/run\/slurm\/b0\/task-3\.json:4: .*field "outcome"/,
      );
    },
  );

  it('walks one task through pending, running, cancelled, resubmitted and collected', () => {
    let poll = firstPoll();
    const seen: string[] = [];
    const step = (over: Partial<TaskView>) => {
      const a = act(over, poll);
      seen.push(a.kind);
      if ('poll' in a) poll = a.poll;
      return a;
    };
    step({});
    step({ state: 'PENDING' });
    step({ state: 'RUNNING' });
    step({ state: 'CANCELLED' });
    step({ job: { id: '13', task: '13_0' }, attempts: 2 });
    step({ job: { id: '13', task: '13_0' }, attempts: 2, state: 'RUNNING' });
    step({ job: { id: '13', task: '13_0' }, attempts: 2, result: { kind: 'record', record } });
    assert.deepEqual(seen, ['query', 'wait', 'wait', 'resubmit', 'query', 'wait', 'collect']);
  });
});
