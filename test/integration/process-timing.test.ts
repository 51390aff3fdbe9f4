// The timed window of a fresh process (what `tunebench time` reports): from its exec to its exit, with the CPU
// time the kernel charged it; nothing of the harness's work around it (cgroups, pipes, cleanup, telemetry).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PIPE_GRACE_SECONDS } from '../../harness/trial/launch.js';
import { shellTrial } from '../support/shell-trial.js';

describe('the timed window of a fresh process', () => {
  it('ends at the exit: a helper that holds the pipes afterwards adds to the wall time, never to the window', async () => {
    // The shell exits at once; its helper keeps stdout open until the harness closes the pipes.
    const r = await shellTrial('sleep 30 & exit 0');
    assert.equal(r.outcome, 'ok');
    assert.ok(r.timing, 'a fresh process has a timed window');
    assert.ok(r.wallSeconds >= PIPE_GRACE_SECONDS, `the trial waited for the pipes: ${r.wallSeconds} s`);
    assert.ok(
      r.timing.seconds < PIPE_GRACE_SECONDS / 2,
      `the window is the shell's life only: ${r.timing.seconds} s of ${r.wallSeconds} s`,
    );
  });

  it('covers the whole run of the program: a sleep is timed at least as long as it sleeps, and within the trial', async () => {
    // While the harness is busy (its event loop blocked for 50 ms right after the spawn) it hears the join
    // wrapper late; the wrapper waits for its go, so the window still opens before the program starts (a
    // window opened when the word was heard, with the program already running, measured 0.29914 s).
    const busy = setTimeout(() => {
      const until = Date.now() + 50;
      while (Date.now() < until);
    }, 0);
    const r = await shellTrial('sleep 0.3');
    clearTimeout(busy);
    assert.equal(r.outcome, 'ok');
    assert.ok(r.timing!.seconds >= 0.3, `${r.timing!.seconds} s`);
    assert.ok(r.timing!.seconds <= r.wallSeconds, 'the window lies inside the trial');
    // Sleeping costs next to no CPU.
    assert.ok(r.timing!.userSeconds! + r.timing!.systemSeconds! < 0.15, JSON.stringify(r.timing));
  });

  it("counts the program's CPU time (and its waited-for children's) as user and system seconds", async () => {
    // About half a second of CPU in a child the shell waits for: counted, whatever the machine's load.
    const r = await shellTrial('i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; sh -c "exit 0"');
    assert.equal(r.outcome, 'ok');
    const cpu = r.timing!.userSeconds! + r.timing!.systemSeconds!;
    assert.ok(cpu >= 0.1, `CPU ${cpu} s in a window of ${r.timing!.seconds} s`);
    // The kernel cannot charge more CPU than one core gives in the window (ticks round: allow one tick each).
    assert.ok(cpu <= r.timing!.seconds + 0.02, `CPU ${cpu} s in a window of ${r.timing!.seconds} s`);
  });
});
