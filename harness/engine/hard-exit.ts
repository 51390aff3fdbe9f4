// What must happen even when tunebench exits at once (a second Ctrl-C, an uncaught error): the
// trial's processes are killed and the run directory records why it ended and is unlocked, so the
// run can be resumed. Hooks are synchronous; they run once, in the order they were registered.
import { killActiveTrials } from '../trial/process.js';

/** A hook may return the command that continues what it closed (a run's resume command, a string). */
type Hook = (status: 'stopped' | 'failed', reason: string) => unknown;
const hooks = new Set<Hook>();
let ran = false;

/** Registers a hook; the returned function removes it (when the run ended normally). */
export function onHardExit(hook: Hook): () => void {
  hooks.add(hook);
  return () => hooks.delete(hook);
}

/** Kills every running trial, then runs the hooks; never throws. Returns the commands the hooks gave. */
export function hardExit(status: 'stopped' | 'failed', reason: string): string[] {
  const next: string[] = [];
  if (ran) return next;
  ran = true;
  try {
    killActiveTrials();
  } catch {
    // Best effort: the hooks still run.
  }
  for (const hook of hooks) {
    try {
      const command = hook(status, reason);
      if (typeof command === 'string') next.push(command);
    } catch {
      // One failing hook must not keep the others from running.
    }
  }
  return next;
}
