// What must happen even when tunebench exits at once (a second Ctrl-C, an uncaught error): the
// trial's processes are killed and the run directory records why it ended and is unlocked, so the
// run can be resumed. Hooks are synchronous; they run once, in the order they were registered.
import { killActiveTrials } from '../trial/process.js';

type Hook = (status: 'stopped' | 'failed', reason: string) => void;
const hooks = new Set<Hook>();
let ran = false;

/** Registers a hook; the returned function removes it (when the run ended normally). */
export function onHardExit(hook: Hook): () => void {
  hooks.add(hook);
  return () => hooks.delete(hook);
}

/** Kills every running trial, then runs the hooks; never throws. */
export function hardExit(status: 'stopped' | 'failed', reason: string): void {
  if (ran) return;
  ran = true;
  try {
    killActiveTrials();
  } catch {
    // Best effort: the hooks still run.
  }
  for (const hook of hooks) {
    try {
      hook(status, reason);
    } catch {
      // One failing hook must not keep the others from running.
    }
  }
}
