// Names: those a user may not choose (parameters whose TUNEBENCH_<NAME> variable is one the harness
// sets, workload.env entries the harness would overwrite, JavaScript's own keys) and stage names.
import { ONNX_WORKLOAD_ENV } from '../workloads/onnx/spec.js';
import { ENV, paramEnvName } from '../workloads/protocol/events.js';

/**
 * Every variable the harness sets for a trial or its processes: the protocol's, the ONNX child's spec, the
 * trial mark (TRIAL_MARK_ENV of trial/process.ts), the warm server's flag (WARM_SERVER_ENV of
 * trial/warm-server.ts) and a bracket session's control file (BRACKET_ENV of trial/bracket-session.ts), named
 * here because experiment/ sits below trial/. One set in workload.env would make the adapter act as what it is not.
 */
export const HARNESS_ENV: readonly string[] = [
  ...Object.values(ENV),
  ONNX_WORKLOAD_ENV,
  'TUNEBENCH_TRIAL_MARK',
  'TUNEBENCH_WARM_SERVER',
  'TUNEBENCH_BRACKET',
];

const MEANING: Record<string, string> = {
  [ENV.config]: 'the whole configuration as JSON',
  [ENV.events]: 'the path of the events file',
  [ENV.warmupSteps]: 'the number of warm-up steps, which measure.warmup_steps sets',
  [ENV.steps]: "the number of timed steps, which measure.steps (or a stage's steps) sets",
  [ENV.trialId]: 'the trial id',
  [ENV.trialEpochs]: 'the epochs a max-batch confirmation asks the trial to span',
};

/** Why `name` cannot be a parameter, or undefined when it can. */
export function paramNameProblem(name: string): string | undefined {
  if (isObjectPrototypeKey(name)) return reservedKeyMessage(name, 'parameter');
  const variable = paramEnvName(name);
  if (!HARNESS_ENV.includes(variable)) return undefined;
  const meaning = MEANING[variable];
  return (
    `the parameter ${JSON.stringify(name)} would be given to the workload as ${variable}, which tunebench ` +
    `already sets for every trial (workload protocol)${meaning ? ` to ${meaning}` : ''}; rename the parameter`
  );
}

/** Why `name` cannot be a workload.env entry, or undefined when it can. */
export function envNameProblem(name: string): string | undefined {
  if (isObjectPrototypeKey(name)) return reservedKeyMessage(name, 'variable');
  if (HARNESS_ENV.includes(name))
    return (
      `${name} is set by tunebench for every trial (workload protocol), ` +
      'so this value would be overwritten; remove it'
    );
  return undefined;
}

/** Names that every JavaScript object already has ("constructor", "toString", "__proto__", ...). */
const OBJECT_PROTOTYPE_KEYS: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

export function isObjectPrototypeKey(key: string): boolean {
  return OBJECT_PROTOTYPE_KEYS.has(key);
}

/** Why a user-chosen name such as "constructor" is refused; `noun` names what it names ("parameter"). */
export function reservedKeyMessage(key: string, noun = 'key'): string {
  const why =
    key === '__proto__'
      ? "it is reserved in JavaScript, where it sets an object's prototype instead of adding a key, " +
        'so it would be silently dropped'
      : `names of JavaScript object properties (Object.prototype.${key}) ` +
        'are reserved, since every object already has them';
  return `${JSON.stringify(key)} cannot be a ${noun} name: ${why}; rename the ${noun}`;
}

/** A stage's name: its own, or "<kind>-<position>" ("sweep-2"). */
export function stageName(stage: { name?: string | undefined; kind: string }, index: number): string {
  return stage.name ?? `${stage.kind}-${index + 1}`;
}
