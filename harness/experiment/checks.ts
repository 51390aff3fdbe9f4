// Checks that span several fields, after the schema has validated each one.
import type { Frozen } from '../util/frozen.js';
import { paramEnvName } from '../workloads/protocol/events.js';
import { closest } from './did-you-mean.js';
import { names, parseExpr } from './expr.js';
import { gridTooLarge } from './grid-size.js';
import type { Issue } from './issues.js';
import { stageName } from './names.js';
import { checkTemplates } from './template-checks.js';
import { checkStage, type ExperimentKinds, stageUse } from './kinds.js';
import { ARENA_POLICIES, ARENA_SHRINK_UNSUPPORTED } from '../workloads/onnx/spec.js';
import { parseClaim, type Claim } from '../stats/claim.js';
import type { ClaimMetric } from '../domain/index.js';
import type { ClaimStageSpec, CompareStageSpec, Experiment, MaxBatchStageSpec, SweepStageSpec } from './schema.js';
import { onnxParams } from './schema/workload.js';

// The engine and history name stages through here.
export { stageName };

/** Parameters the ONNX workload understands: the fields of its workload.params. */
export const ONNX_PARAMS: readonly string[] = Object.keys(onnxParams.shape);
const PIPELINE_PARAMS = ['num_workers', 'prefetch_factor', 'persistent_workers'];

/** `env` must not set a protocol variable; every "{name}" must have a value in each stage (template-checks.ts). */
function checkCommand(e: Experiment, kinds: ExperimentKinds, issues: Issue[]): void {
  if (e.workload.kind !== 'command') return;
  const params = new Set<string>(Object.keys(e.workload.params));
  e.stages.forEach((stage, i) => {
    for (const run of stageUse(kinds, stage.kind, stage, i).runs) for (const p of run.varied.keys()) params.add(p);
  });
  for (const name of Object.keys(e.workload.env ?? {})) {
    const param = [...params].find((p) => paramEnvName(p) === name);
    if (param !== undefined)
      issues.push({
        path: `workload.env.${name}`,
        message:
          `is set by tunebench to the value of the parameter ${JSON.stringify(param)} (workload protocol), ` +
          'so this value would be overwritten; remove it, or set the parameter instead',
      });
  }
  if (e.workload.launcher && e.workload.warm_start === 'fork')
    issues.push({
      path: 'workload.warm_start',
      message:
        'fork cannot be used with workload.launcher: a trial of N ranks is started by torch.distributed.run, ' +
        'not forked from a warm server; remove warm_start (or set it to off), or remove workload.launcher',
    });
  if (e.limits.cgroupfs === 'read-only' && e.limits.user !== undefined)
    issues.push({
      path: 'limits.cgroupfs',
      message:
        `read-only is for workloads that run as root; run as ${e.limits.user} (limits.user) a trial cannot write ` +
        "root's cgroup files anyway: remove limits.cgroupfs or limits.user",
    });
  if (e.limits.cgroupfs === 'read-only' && e.workload.warm_start === 'fork')
    issues.push({
      path: 'workload.warm_start',
      message:
        "fork cannot be used with limits.cgroupfs: read-only: a warm server's forks do not start in the trial's " +
        'namespaces; set warm_start: off, or remove limits.cgroupfs',
    });
  if (e.limits.user !== undefined && e.workload.warm_start === 'fork')
    issues.push({
      path: 'workload.warm_start',
      message:
        `fork cannot be used with limits.user (${e.limits.user}): the warm server's forks would run as the ` +
        "harness's user; set warm_start: off, or remove limits.user",
    });
  checkTemplates(e, kinds, issues);
}

/** A sweep's checks: its parameters, ranges, constraints, applies_when and cost order. */
export function checkSweep(e: Experiment, stage: SweepStageSpec, i: number, issues: Issue[]): void {
  checkBatchKnown(e, stage, i, issues);
  const swept = Object.keys(stage.params);
  if (stage.strategy === 'race' && stage.repeats !== undefined && stage.repeats < stage.min_rounds) {
    issues.push({
      path: `stages[${i}].repeats`,
      message:
        `a race needs at least min_rounds (${stage.min_rounds}) rounds before it may eliminate a config, ` +
        `got ${stage.repeats}; raise repeats or use strategy: grid`,
    });
  }
  const known =
    e.workload.kind === 'onnx' ? [...ONNX_PARAMS] : [...swept, ...Object.keys(e.workload.params), ...ONNX_PARAMS];
  for (const p of swept) {
    const path = `stages[${i}].params.${p}`;
    if (e.workload.kind === 'onnx' && !ONNX_PARAMS.includes(p)) {
      const hint = closest(p, ONNX_PARAMS);
      issues.push({
        path,
        message:
          `unknown parameter of the onnx workload${hint ? ` (did you mean "${hint}"?)` : ''}; ` +
          `known: ${ONNX_PARAMS.join(', ')}`,
      });
    } else if (e.workload.kind === 'onnx' && PIPELINE_PARAMS.includes(p) && !e.workload.pipeline) {
      issues.push({ path, message: 'needs workload.pipeline (the data loader it tunes)' });
    } else if ((e.workload.params as Record<string, unknown>)[p] !== undefined) {
      issues.push({ path: `workload.params.${p}`, message: `is swept by stages[${i}]; remove the fixed value` });
    }
    const spec = stage.params[p]!;
    if (!Array.isArray(spec) && 'range' in spec && spec.range[0] > spec.range[1]) {
      issues.push({
        path: `${path}.range`,
        message: `expected [low, high] with low <= high, got ${JSON.stringify(spec.range)}`,
      });
    }
    if (!Array.isArray(spec) && 'pow2' in spec && spec.pow2[0] > spec.pow2[1]) {
      issues.push({
        path: `${path}.pow2`,
        message: `expected [low, high] with low <= high, got ${JSON.stringify(spec.pow2)}`,
      });
    }
  }
  const tooLarge = gridTooLarge(stage.params);
  if (tooLarge !== undefined) issues.push({ path: `stages[${i}].params`, message: tooLarge });
  const exprs: [string, string | number, string[]][] = [];
  if (stage.constraints.cpus)
    exprs.push(
      [`stages[${i}].constraints.cpus.uses`, stage.constraints.cpus.uses, known],
      [`stages[${i}].constraints.cpus.max`, stage.constraints.cpus.max, ['cpus']],
    );
  if (stage.constraints.memory)
    exprs.push([`stages[${i}].constraints.memory.uses`, stage.constraints.memory.uses, known]);
  for (const [path, text, allowed] of exprs) {
    try {
      const unknown = names(parseExpr(String(text))).filter((n) => !allowed.includes(n));
      if (unknown.length > 0)
        issues.push({
          path,
          message: `unknown name ${JSON.stringify(unknown[0])}; expected one of ${allowed.join(', ')}`,
        });
    } catch (error) {
      issues.push({ path, message: (error as Error).message });
    }
  }
  for (const [p, condition] of Object.entries(stage.applies_when)) {
    const path = `stages[${i}].applies_when.${p}`;
    if (!swept.includes(p))
      issues.push({ path, message: `expected a swept parameter (${swept.join(', ')}), got ${JSON.stringify(p)}` });
    else if (!swept.includes(condition))
      issues.push({ path, message: `expected the name of another swept parameter, got ${JSON.stringify(condition)}` });
    else if (condition === p) issues.push({ path, message: 'a parameter cannot be conditional on itself' });
  }
  for (const [j, c] of (stage.cost ?? []).entries()) {
    if (!swept.includes(c))
      issues.push({
        path: `stages[${i}].cost[${j}]`,
        message: `expected one of the swept parameters (${swept.join(', ')}), got ${JSON.stringify(c)}`,
      });
  }
}

/** The metric a claim is judged on: from its words when it is about memory, else as given (default throughput). */
export function claimMetric(spec: Pick<ClaimStageSpec, 'metric'>, claim: Claim): ClaimMetric {
  return claim.quantity === 'memory' ? 'peak_memory' : (spec.metric ?? 'throughput');
}

export function checkClaim(e: Experiment, stage: ClaimStageSpec, i: number, issues: Issue[]): void {
  let metric = stage.metric ?? 'throughput';
  try {
    const claim = parseClaim(stage.claim, stage.tolerance);
    metric = claimMetric(stage, claim);
    const memory = stage.metric === 'peak_memory';
    if (stage.metric !== undefined && (claim.quantity === 'memory') !== memory) {
      const want = claim.quantity === 'memory' ? 'peak_memory' : 'throughput, step_time or process_time';
      issues.push({
        path: `stages[${i}].metric`,
        message:
          `the claim ${JSON.stringify(stage.claim)} is about ${claim.quantity}, ` +
          `so metric must be ${want} (or left out), got ${JSON.stringify(stage.metric)}`,
      });
    }
  } catch (error) {
    issues.push({ path: `stages[${i}].claim`, message: (error as Error).message });
  }
  if (stage.min_pairs > stage.max_pairs)
    issues.push({
      path: `stages[${i}].min_pairs`,
      message: `expected at most max_pairs (${stage.max_pairs}), got ${stage.min_pairs}`,
    });
  const sides = [
    ...Object.entries(stage.baseline).map(([k]) => ['baseline', k] as const),
    ...Object.entries(stage.candidate).map(([k]) => ['candidate', k] as const),
  ];
  for (const [side, p] of sides) {
    if (e.workload.kind === 'onnx' && !ONNX_PARAMS.includes(p)) {
      const hint = closest(p, ONNX_PARAMS);
      issues.push({
        path: `stages[${i}].${side}.${p}`,
        message: `unknown parameter of the onnx workload${hint ? ` (did you mean "${hint}"?)` : ''}`,
      });
    }
  }
  const commands = stage.baseline_command !== undefined || stage.candidate_command !== undefined;
  if (commands && e.workload.kind !== 'command')
    issues.push({ path: `stages[${i}]`, message: 'baseline_command and candidate_command need a command workload' });
  const same =
    JSON.stringify(Object.entries(stage.baseline).sort()) === JSON.stringify(Object.entries(stage.candidate).sort()) &&
    JSON.stringify(stage.baseline_command) === JSON.stringify(stage.candidate_command);
  if (same)
    issues.push({
      path: `stages[${i}].candidate`,
      message: 'is the same as the baseline: a claim compares two different configs or commands',
    });
  const batchKnown =
    e.workload.params.batch_size !== undefined ||
    'batch_size' in stage.candidate ||
    e.stages.slice(0, i).some((s) => s.kind === 'max-batch');
  if (!batchKnown && metric === 'throughput' && e.workload.kind === 'onnx')
    issues.push({
      path: `stages[${i}]`,
      message: 'needs a batch size: set workload.params.batch_size or run a max-batch stage before it',
    });
}

export function checkCompare(e: Experiment, stage: CompareStageSpec, i: number, issues: Issue[]): void {
  checkBatchKnown(e, stage, i, issues);
  const p = stage.param;
  if (stage.repeats > stage.max_rounds)
    issues.push({
      path: `stages[${i}].repeats`,
      message: `expected at most max_rounds (${stage.max_rounds}), got ${stage.repeats}`,
    });
  if (e.workload.kind === 'onnx' && !ONNX_PARAMS.includes(p)) {
    const hint = closest(p, ONNX_PARAMS);
    issues.push({
      path: `stages[${i}].param`,
      message:
        `unknown parameter of the onnx workload${hint ? ` (did you mean "${hint}"?)` : ''}; ` +
        `known: ${ONNX_PARAMS.join(', ')}`,
    });
  } else if (e.workload.kind === 'onnx' && PIPELINE_PARAMS.includes(p) && !e.workload.pipeline) {
    issues.push({ path: `stages[${i}].param`, message: 'needs workload.pipeline (the data loader it tunes)' });
  } else if ((e.workload.params as Record<string, unknown>)[p] !== undefined) {
    issues.push({ path: `workload.params.${p}`, message: `is compared by stages[${i}]; remove the fixed value` });
  }
  stage.arms.forEach((v, j) => {
    if (stage.arms.indexOf(v) !== j)
      issues.push({
        path: `stages[${i}].arms[${j}]`,
        message: `expected distinct arms, got ${JSON.stringify(v)} again`,
      });
    if (e.workload.kind === 'onnx' && p === 'arena') {
      if (v === 'shrink-every-run') issues.push({ path: `stages[${i}].arms[${j}]`, message: ARENA_SHRINK_UNSUPPORTED });
      else if (!(ARENA_POLICIES as readonly unknown[]).includes(v))
        issues.push({
          path: `stages[${i}].arms[${j}]`,
          message: `expected one of keep, off, got ${JSON.stringify(v)}`,
        });
    }
  });
  if (stage.commands !== undefined) {
    if (e.workload.kind !== 'command')
      issues.push({ path: `stages[${i}].commands`, message: 'per-arm commands need a command workload' });
    const arms = stage.arms.map(String);
    for (const key of Object.keys(stage.commands))
      if (!arms.includes(key))
        issues.push({
          path: `stages[${i}].commands.${JSON.stringify(key)}`,
          message: `names no arm: expected one of ${arms.map((a) => JSON.stringify(a)).join(', ')}`,
        });
  }
  if (stage.baseline !== undefined && !stage.arms.includes(stage.baseline)) {
    issues.push({
      path: `stages[${i}].baseline`,
      message:
        `expected one of the arms (${stage.arms.map((a) => JSON.stringify(a)).join(', ')}), ` +
        `got ${JSON.stringify(stage.baseline)}`,
    });
  }
}

/** Every cross-field problem of an experiment whose fields are each valid; empty when there is none. */
/** Buckets and the training recipe: what they need of the workload and of each other. */
function checkMaxBatchExtras(e: Experiment, stage: MaxBatchStageSpec, i: number, issues: Issue[]): void {
  const at = (field: string) => `stages[${i}].${field}`;
  if (stage.buckets) {
    const b = stage.buckets;
    if (e.workload.kind !== 'command')
      issues.push({
        path: at('buckets'),
        message:
          'needs a command workload whose program reads the bucket parameter (such as seq_len); ' +
          "the ONNX workload's shapes are fixed by its model",
      });
    if (b.param === stage.param)
      issues.push({ path: at('buckets.param'), message: `must differ from the searched parameter ${stage.param}` });
    if (new Set(b.values).size !== b.values.length)
      issues.push({ path: at('buckets.values'), message: `expected distinct values, got ${JSON.stringify(b.values)}` });
    if (stage.choose === 'fastest')
      issues.push({
        path: at('choose'),
        message: 'fastest is not measured per bucket (no throughput curve per bucket); use recommended or max',
      });
  }
  if ((stage.base_lr === undefined) !== (stage.base_batch === undefined))
    issues.push({
      path: at(stage.base_lr === undefined ? 'base_lr' : 'base_batch'),
      message: 'base_lr and base_batch go together: the learning rate and the effective batch it was tuned at',
    });
  if (stage.keep_effective_batch !== undefined) {
    if (e.workload.kind !== 'command')
      issues.push({
        path: at('keep_effective_batch'),
        message: `needs a command workload that reads ${stage.accumulation_param}; the ONNX workload does not train`,
      });
    const ranks = workloadRanks(e);
    if (stage.keep_effective_batch % ranks !== 0)
      issues.push({
        path: at('keep_effective_batch'),
        message: `expected a multiple of the ${ranks} ranks (workload.launcher.nproc_per_node), got ${stage.keep_effective_batch}`,
      });
    if (stage.accumulation_param === stage.param)
      issues.push({
        path: at('accumulation_param'),
        message: `must differ from the searched parameter ${stage.param}`,
      });
  }
}

/**
 * strategy: a reference finder places the boundary from start by its own rule, so what would place it otherwise
 * (an in-process bracket, a neighbouring bucket's max, an earlier stage's prediction) cannot go with it.
 */
function checkMaxBatchStrategy(stage: MaxBatchStageSpec, i: number, issues: Issue[]): void {
  if (stage.strategy === 'tunebench') return;
  if (stage.strategy === 'shrink-on-oom' && stage.start === undefined)
    issues.push({
      path: `stages[${i}].start`,
      message:
        "strategy shrink-on-oom shrinks from start (Accelerate's starting_batch_size), so start is required: " +
        'set it to a batch that may not fit, such as 1024',
    });
  const clash = [
    stage.bracket === 'in-process' ? 'bracket: in-process' : undefined,
    stage.buckets !== undefined ? 'buckets' : undefined,
    stage.predicted_by !== undefined ? 'predicted_by' : undefined,
  ].filter((c): c is string => c !== undefined);
  for (const c of clash)
    issues.push({
      path: `stages[${i}].strategy`,
      message:
        `${stage.strategy} places the boundary by its own rule from start, so it cannot go with ${c}; ` +
        `remove ${c.split(':')[0]}, or use strategy: tunebench`,
    });
}

/** constraint and predicted_by: where the stage's allocation goes, and whose prediction it confirms. */
function checkMaxBatchDevice(e: Experiment, stage: MaxBatchStageSpec, i: number, issues: Issue[]): void {
  const at = (field: string) => `stages[${i}].${field}`;
  if (stage.constraint !== undefined && e.executor.kind !== 'slurm')
    issues.push({
      path: at('constraint'),
      message:
        "places this stage's SLURM allocation (sbatch --constraint), so it needs executor: { kind: slurm } " +
        `in the experiment file, got executor.kind ${e.executor.kind}; remove it to run on this machine`,
    });
  const from = stage.predicted_by;
  if (from === undefined) return;
  const names = e.stages.map(stageName);
  const j = names.indexOf(from);
  const earlier = e.stages
    .slice(0, i)
    .flatMap((s, k) => (s.kind === 'max-batch' ? [JSON.stringify(names[k])] : []))
    .join(', ');
  const choices = earlier ? `one of ${earlier}` : 'none: add a max-batch stage before this one';
  const source = e.stages[j];
  if (source === undefined || j >= i)
    issues.push({
      path: at('predicted_by'),
      message:
        `expected the name of an earlier max-batch stage (${choices}), got ${JSON.stringify(from)}` +
        `${j === i ? ', this stage itself' : j > i ? ', which runs after this one' : ''}`,
    });
  else if (source.kind !== 'max-batch')
    issues.push({
      path: at('predicted_by'),
      message: `expected a max-batch stage, whose memory line predicts other cards (${choices}); ${JSON.stringify(from)} is a ${source.kind} stage`,
    });
  else if (source.param !== stage.param)
    issues.push({
      path: at('param'),
      message: `must be the parameter that ${JSON.stringify(from)} searches (${source.param}) to confirm its prediction, got ${stage.param}`,
    });
  const chooses = (['buckets', 'keep_effective_batch', 'base_lr'] as const).filter((f) => stage[f] !== undefined);
  for (const f of chooses)
    issues.push({
      path: at(f),
      message: `a stage with predicted_by measures one max on its device and chooses nothing; move ${f} to ${JSON.stringify(from)}`,
    });
}

/** Processes per trial: workload.launcher.nproc_per_node under torchrun, else 1. */
export function workloadRanks(e: Frozen<Pick<Experiment, 'workload'>>): number {
  const launcher = (e.workload as { launcher?: { nproc_per_node?: number } }).launcher;
  return launcher?.nproc_per_node ?? 1;
}

/** A max-batch stage's checks: a cap to find the max under, its bounds, extras, device and strategy. */
export function checkMaxBatch(e: Experiment, stage: MaxBatchStageSpec, i: number, issues: Issue[]): void {
  const fixed = e.workload.params as Record<string, unknown>;
  const onGpu = fixed['execution_provider'] === 'cuda' || String(fixed['device'] ?? '').startsWith('cuda');
  if (e.limits.memory === undefined && !onGpu) {
    issues.push({
      path: `stages[${i}]`,
      message:
        'a max-batch stage on CPU needs limits.memory (for example "3GiB"), ' +
        'so that probes fail by OOM instead of exhausting the machine; on a GPU set the parameter device: ' +
        'cuda (or execution_provider: cuda), and the device memory is the cap',
    });
  }
  const m = stage.multiple_of;
  if (stage.ceiling < m)
    issues.push({
      path: `stages[${i}].ceiling`,
      message: `expected at least multiple_of (${m}), got ${stage.ceiling}`,
    });
  if (stage.start !== undefined && stage.start > stage.ceiling)
    issues.push({
      path: `stages[${i}].start`,
      message: `expected at most ceiling (${stage.ceiling}), got ${stage.start}`,
    });
  if (fixed[stage.param] !== undefined) {
    issues.push({
      path: `workload.params.${stage.param}`,
      message: `is searched by stages[${i}]; remove the fixed value`,
    });
  }
  checkMaxBatchExtras(e, stage, i, issues);
  checkMaxBatchDevice(e, stage, i, issues);
  checkMaxBatchStrategy(stage, i, issues);
}

/** A sweep or compare measures throughput at a batch: one must be fixed, varied by it, or chosen before it. */
function checkBatchKnown(e: Experiment, stage: SweepStageSpec | CompareStageSpec, i: number, issues: Issue[]): void {
  const varies = stage.kind === 'sweep' ? 'batch_size' in stage.params : stage.param === 'batch_size';
  // A command workload has a batch only where its templates use one (checked in template-checks.ts).
  const batchKnown =
    e.workload.kind === 'command' ||
    e.workload.params.batch_size !== undefined ||
    varies ||
    e.stages.slice(0, i).some((s) => s.kind === 'max-batch');
  if (!batchKnown)
    issues.push({
      path: `stages[${i}]`,
      message:
        'needs a batch size: set workload.params.batch_size, ' +
        `${stage.kind === 'sweep' ? 'sweep batch_size' : 'compare batch_size'}, or run a max-batch stage before it`,
    });
}

/** Every check across fields: each stage by its kind's checks (`kinds`), then the workload's and the names. */
export function checkExperiment(e: Experiment, kinds: ExperimentKinds): Issue[] {
  const issues: Issue[] = [];
  e.stages.forEach((stage, i) => checkStage(kinds, stage.kind, e, stage, i, issues));
  if (e.workload.kind === 'command') checkCommand(e, kinds, issues);
  if (e.workload.kind === 'onnx' && e.workload.params.arena === 'shrink-every-run') {
    issues.push({ path: 'workload.params.arena', message: ARENA_SHRINK_UNSUPPORTED });
  }
  const names = e.stages.map(stageName);
  names.forEach((n, i) => {
    if (names.indexOf(n) !== i)
      issues.push({
        path: `stages[${i}].name`,
        message: `expected a unique stage name, got ${JSON.stringify(n)} again`,
      });
  });
  return issues;
}
