// Waiting in tests for something another process does: poll a probe until it returns a value.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDir } from './runs.js';

/** Polls `probe` every `everyMs` until it returns a value other than null/undefined (a throw counts as "not yet"). */
export async function waitFor<T>(
  what: string,
  probe: () => T | null | undefined | Promise<T | null | undefined>,
  seconds = 120,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    try {
      const v = await probe();
      if (v !== null && v !== undefined) return v;
    } catch {
      // not there yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits until the single run directory of `name` under `out` holds at least n journaled trials; returns it. */
export function waitForTrials(out: string, name: string, n: number, seconds = 60): Promise<string> {
  return waitFor(
    `${n} trials of ${name} under ${out}`,
    () => {
      const dir = runDir(out, name);
      return readFileSync(join(dir, 'trials.jsonl'), 'utf8').split('\n').length - 1 >= n ? dir : null;
    },
    seconds,
  );
}
