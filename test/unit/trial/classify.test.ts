// Outcome classification: structured signals first, message patterns second.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classify, type Observation } from '../../../harness/trial/classify.js';
import { launcherFailure } from '../../../harness/trial/run-trial.js';
import { matchOom, OOM_PATTERNS } from '../../../harness/workloads/protocol/oom-patterns.js';
import type { WorkloadEvent } from '../../../harness/workloads/protocol/events.js';

const base: Observation = {
  events: [],
  exitCode: 0,
  signal: null,
  timedOut: false,
  killedByHarness: false,
  cgroupOomKills: 0,
  stderr: '',
  eventsRequired: true,
  malformedEvents: 0,
};
const step: WorkloadEvent = { event: 'step', samples: 8, seconds: 0.1 };
const obs = (o: Partial<Observation>): Observation => ({ ...base, ...o });
/** The end of torchrun's stderr (torch 1.13) when rank 1 was killed by SIGKILL. */
const TORCHRUN_SIGKILL = [
  'torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ',
  '======================================================',
  'train.py FAILED',
  '------------------------------------------------------',
  'Failures:',
  '  <NO_OTHER_FAILURES>',
  '------------------------------------------------------',
  'Root Cause (first observed failure):',
  '[0]:',
  '  time      : 2026-11-25_01:13:15',
  '  host      : localhost',
  '  rank      : 1 (local_rank: 1)',
  '  exitcode  : -9 (pid: 22256)',
  '  error_file: <N/A>',
  '  traceback : Signal 9 (SIGKILL) received by PID 22256',
  '======================================================',
].join('\n');

describe('classify', () => {
  it('a library that cannot be mapped under an address-space cap, before any step, is a limit problem', () => {
    const stderr =
      'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n' +
      'ImportError: libtorch_cpu.so: failed to map segment from shared object\n';
    const c = classify(obs({ exitCode: 1, stderr, addressSpaceCap: 2 ** 31 }));
    assert.equal(c.outcome, 'invalid');
    assert.equal(c.limitProblem, true);
    assert.match(c.reason, /prlimit --as, 2\.0 GiB.*libtorch_cpu\.so: failed to map segment/);
    // Under a cgroup (no address-space cap) the same text is the workload's crash; after a step, too.
    assert.equal(classify(obs({ exitCode: 1, stderr, addressSpaceCap: null })).outcome, 'crash');
    const stepped: WorkloadEvent[] = [{ event: 'step', samples: 1, seconds: 1 }];
    assert.equal(
      classify(obs({ exitCode: 1, stderr, addressSpaceCap: 2 ** 31, events: stepped })).limitProblem,
      undefined,
    );
  });

  it('ok: exit 0 with steps', () => assert.equal(classify(obs({ events: [step] })).outcome, 'ok'));
  it('ok: exit 0 without events when the protocol is optional', () => {
    const c = classify(obs({ eventsRequired: false }));
    assert.equal(c.outcome, 'ok');
    assert.match(c.reason, /whole-process timing/);
  });
  it('invalid: exit 0 without steps when events are required', () =>
    assert.equal(classify(obs({})).outcome, 'invalid'));
  it('timeout wins over everything, including an oom event', () => {
    assert.equal(
      classify(
        obs({ timedOut: true, killedByHarness: true, signal: 'SIGKILL', events: [{ event: 'oom', message: 'x' }] }),
      ).outcome,
      'timeout',
    );
  });
  it('an oom event beats a misleading exit status and stderr', () => {
    assert.equal(
      classify(
        obs({ exitCode: 1, stderr: 'Segmentation fault', events: [{ event: 'oom', message: 'CUDA out of memory' }] }),
      ).outcome,
      'oom',
    );
  });
  it('the OOM exit code is oom even without an event', () =>
    assert.equal(classify(obs({ exitCode: 86 })).outcome, 'oom'));
  it('the invalid-config exit code is invalid', () => assert.equal(classify(obs({ exitCode: 87 })).outcome, 'invalid'));
  it('SIGKILL from outside is oom; SIGKILL from the harness is not', () => {
    assert.equal(classify(obs({ exitCode: null, signal: 'SIGKILL' })).outcome, 'oom');
    assert.equal(classify(obs({ exitCode: null, signal: 'SIGKILL', killedByHarness: true })).outcome, 'crash');
  });
  it('cgroup oom_kill counts are oom', () =>
    assert.equal(
      classify(obs({ exitCode: null, signal: 'SIGKILL', killedByHarness: true, cgroupOomKills: 1 })).outcome,
      'oom',
    ));
  it('a crash with an OOM message is oom; without one it is a crash', () => {
    assert.equal(
      classify(
        obs({
          exitCode: 1,
          stderr: "RuntimeError: DefaultCPUAllocator: can't allocate memory: you tried to allocate 8589934592 bytes",
        }),
      ).outcome,
      'oom',
    );
    assert.equal(
      classify(
        obs({
          exitCode: 134,
          signal: 'SIGABRT',
          stderr: "terminate called after throwing an instance of 'std::bad_alloc'",
        }),
      ).outcome,
      'oom',
    );
    const crash = classify(obs({ exitCode: 1, stderr: 'ZeroDivisionError: division by zero' }));
    assert.equal(crash.outcome, 'crash');
    assert.equal(crash.reason, 'exit code 1');
  });
  it('a program that could not be executed (exit 127 from prlimit) is invalid, with its message', () => {
    const c = classify(
      obs({ exitCode: 127, stderr: 'prlimit: failed to execute /no/such/trainer: No such file or directory\n' }),
    );
    assert.equal(c.outcome, 'invalid');
    assert.match(c.reason, /could not start the program \(exit code 127\): prlimit: failed to execute/);
    assert.equal(c.notStarted, true, 'said as a field, which the launcher check reads (not the reason text)');
    assert.equal(
      launcherFailure({ ...c, stderrTail: '', events: [], reason: 'reworded' }),
      'reworded',
      'a reason in other words is still a program that never started',
    );
    assert.equal(
      classify(obs({ exitCode: 127, stderr: 'some script error' })).outcome,
      'crash',
      'exit 127 alone is not proof',
    );
  });

  it('a zero exit after an error event with no steps is invalid, not ok', () => {
    assert.equal(classify(obs({ events: [{ event: 'error', message: 'bad' }] })).outcome, 'invalid');
  });
});

describe('the OOM pattern table', () => {
  const samples: [string, string][] = [
    [
      'onnxruntime',
      'Non-zero status code returned while running FusedMatMul node. ' +
        'Status Message: Failed to allocate memory for requested buffer of size 1073741824',
    ],
    ['v8', 'RangeError: Array buffer allocation failed'],
    ['v8', 'FATAL ERROR: v8::ArrayBuffer::New Allocation failed - process out of memory'],
    [
      'pytorch',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity)',
    ],
    [
      'pytorch',
      "RuntimeError: [enforce fail at alloc_cpu.cpp:75] data. DefaultCPUAllocator: can't allocate memory: " +
        'you tried to allocate 34359738368 bytes. Error code 12 (Cannot allocate memory)',
    ],
    ['c++', "terminate called after throwing an instance of 'std::bad_alloc'"],
    ['python', 'Traceback (most recent call last):\nMemoryError'],
    ['torchrun', TORCHRUN_SIGKILL],
  ];
  for (const [source, text] of samples) {
    it(`recognises ${source}: ${text.slice(0, 50)}`, () => assert.equal(matchOom(text)?.source, source));
  }
  it("does not read torchrun's report of a rank that failed otherwise, or killed later, as OOM", () => {
    const crashed = TORCHRUN_SIGKILL.replace('exitcode  : -9', 'exitcode  : 1').replace(
      /traceback : .*/,
      'traceback : x',
    );
    assert.equal(matchOom(crashed), undefined);
    // Another rank killed after the root cause (the launcher's own SIGKILL after its grace) is not the cause.
    const later = crashed.replace('Failures:\n  <NO_OTHER_FAILURES>', '[1]:\n  exitcode  : -9 (pid: 7)');
    assert.equal(matchOom(later), undefined);
    assert.equal(matchOom(`${crashed}\n  exitcode  : -9 (pid: 8)`), undefined, 'only the root cause block counts');
  });
  it('a launcher whose rank was killed by SIGKILL from outside is oom', () => {
    const c = classify(obs({ exitCode: 1, events: [step], stderr: TORCHRUN_SIGKILL }));
    assert.equal(c.outcome, 'oom');
    assert.match(c.reason, /exit code 1 and an out-of-memory message \(torchrun/);
  });
  it('does not fire on ordinary errors', () => {
    for (const text of [
      'ValueError: shapes do not match',
      'Segmentation fault (core dumped)',
      'memory event written',
      'KeyError: memory',
    ])
      assert.equal(matchOom(text), undefined, text);
  });
  it('every pattern is anchored to a source', () => assert.ok(OOM_PATTERNS.every((p) => p.source.length > 0)));
});
