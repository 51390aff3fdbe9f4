// The exception a failed trial died of, from the tail of its stderr.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exceptionOf } from '../../../harness/trial/exception.js';

describe('exceptionOf', () => {
  it("takes a Python traceback's last line and the innermost frame it was raised in", () => {
    const tail = [
      'tunebench: AttributeError in train (epoch 0, after 2 steps); the traceback:',
      'Traceback (most recent call last):',
      '  File "/usr/lib/tunebench.py", line 820, in _run',
      '    fn(state) if with_state else fn()',
      '  File "/home/me/train.py", line 42, in forward',
      '    return self.fc(x)',
      "AttributeError: 'Model' object has no attribute 'fc'",
      '',
    ].join('\n');
    assert.deepEqual(exceptionOf(tail), {
      message: "AttributeError: 'Model' object has no attribute 'fc'",
      where: 'train.py, line 42, in forward',
    });
  });
  it("an argparse error's line, a torch OOM type, a Node.js error, and nothing without an exception", () => {
    assert.deepEqual(exceptionOf('usage: t.py [-h]\nt.py: error: unrecognized arguments: --bach-size=8\n'), {
      message: 't.py: error: unrecognized arguments: --bach-size=8',
    });
    assert.equal(
      exceptionOf('  File "x.py", line 1, in <module>\ntorch.OutOfMemoryError: CUDA out of memory.\n')?.message,
      'torch.OutOfMemoryError: CUDA out of memory.',
    );
    assert.equal(exceptionOf('\n\n'), undefined);
    assert.equal(exceptionOf('prlimit: failed to execute /no/such: No such file or directory\n'), undefined);
    assert.deepEqual(
      exceptionOf(
        'Error: Protobuf parsing failed.\n    at new InferenceSession (x.js:1:1)\n    at process.processImmediate (node:internal/timers:483:21)\n',
      ),
      { message: 'Error: Protobuf parsing failed.' },
    );
  });
});
