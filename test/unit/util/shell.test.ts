// Command lines split into arguments without a shell (tunebench time / claim).
import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { describe, it } from 'node:test';
import { splitCommand, shellLine } from '../../../harness/util/shell.js';

describe('splitCommand', () => {
  it('splits on blanks and keeps quoted text together, as a shell would', () => {
    assert.deepEqual(splitCommand('python train.py --lr 0.1'), ['python', 'train.py', '--lr', '0.1']);
    assert.deepEqual(splitCommand(`python -c 'import time; time.sleep(0.1)'`), [
      'python',
      '-c',
      'import time; time.sleep(0.1)',
    ]);
    assert.deepEqual(splitCommand('echo "a \\"b\\" c" d\\ e \'\''), ['echo', 'a "b" c', 'd e', '']);
    assert.deepEqual(splitCommand('  a\t b  '), ['a', 'b']);
    assert.deepEqual(splitCommand('run --name=x"y z"'), ['run', '--name=xy z']);
  });

  it('round-trips through shellLine', () => {
    const args = ['python', '-c', "print('a b'); x = 1 | 2", '--opt=$HOME', ''];
    assert.deepEqual(splitCommand(shellLine(args)), args);
  });

  it('expands a leading ~ like a shell, and only unquoted', () => {
    assert.deepEqual(splitCommand('python ~/train.py'), ['python', `${homedir()}/train.py`]);
    assert.deepEqual(splitCommand("python '~/train.py'"), ['python', '~/train.py']);
  });

  for (const line of ['sleep 1 | cat', 'a && b', 'a; b', 'a > out', 'echo $HOME', 'ls *.py', 'echo `date`', 'a $(b)']) {
    it(`refuses ${JSON.stringify(line)}, which needs a shell, and names --shell`, () => {
      assert.throws(() => splitCommand(line), /needs a shell .*add --shell/);
    });
  }

  it('passes the same characters quoted, as text', () => {
    assert.deepEqual(splitCommand("grep 'a|b' '*.py' \"$x\""), ['grep', 'a|b', '*.py', '$x']);
  });

  it('names an environment assignment, an unclosed quote and an empty command', () => {
    assert.throws(() => splitCommand('CUDA_VISIBLE_DEVICES=0 python x.py'), /sets an environment variable.*env CUDA/);
    assert.throws(() => splitCommand("python -c 'print(1)"), /the ' quote is never closed/);
    assert.throws(() => splitCommand('echo "a'), /the " quote is never closed/);
    assert.throws(() => splitCommand('   '), /the command is empty/);
    assert.throws(() => splitCommand('echo \\'), /lone backslash/);
  });
});
