// One trial of a shell script through the trial runner, as `tunebench time -S sh` runs a command: no events
// required, the memory mechanism chosen as for a run (cgroups where they can be made).
import { runProcessTrial, type ProcessTrialResult } from '../../harness/trial/process.js';
import { tempDir } from './paths.js';

export function shellTrial(script: string, timeoutSeconds = 30): Promise<ProcessTrialResult> {
  return runProcessTrial({
    argv: ['/bin/sh', '-c', script],
    env: {},
    timeoutSeconds,
    mechanism: 'auto',
    eventsRequired: false,
    scratchDir: tempDir(),
    trialId: 't0000',
  });
}
