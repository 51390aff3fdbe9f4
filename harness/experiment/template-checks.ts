// Checks the command workload's templates stage by stage: every "{name}" needs a value in every
// stage that runs the command, from what that stage sees (fixed, chosen earlier, or varied by it).
import { closest } from './did-you-mean.js';
import { stageName } from './names.js';
import { placeholders, flagState, type Placeholder } from '../workloads/command/template.js';
import type { CommandWorkloadSpec, Experiment, StageSpec } from './schema.js';
import { type ExperimentKinds, type Known, type StageUse, stageUse } from './kinds.js';

type Issue = { path: string; message: string };

const label = (stage: StageSpec, i: number) => `${stageName(stage, i)} (stages[${i}])`;

function merge(into: Map<string, Known>, from: ReadonlyMap<string, Known>): void {
  for (const [p, k] of from) if (!into.get(p)?.always) into.set(p, k);
}

/** The first stage at or after `from` that gives `name` a value, for the message. */
function laterStage(ctx: TemplateContext, name: string, from: number): string | undefined {
  for (let j = from; j < ctx.e.stages.length; j++)
    if (ctx.uses[j]!.runs.some((r) => r.varied.has(name))) return label(ctx.e.stages[j]!, j);
  return undefined;
}

function fixes(template: string, path: string, p: Placeholder, conditional: boolean): string {
  const what = path.startsWith('workload.env.') ? 'the variable optional' : 'the argument optional';
  const optional =
    `make ${what} (${JSON.stringify(template.replace(p.source, `{${p.name}?}`))}: ` +
    `left out while ${p.name} has no value)`;
  // A default would reach the program where applies_when leaves the parameter out on purpose.
  if (conditional) return optional;
  return (
    `give it a default (${JSON.stringify(template.replace(p.source, `{${p.name}:-VALUE}`))}), ` +
    `${optional}, or fix ${p.name} in workload.params`
  );
}

export function checkTemplates(e: Experiment, kinds: ExperimentKinds, issues: Issue[]): void {
  if (e.workload.kind !== 'command') return;
  const uses = e.stages.map((st, i) => stageUse(kinds, st.kind, st, i));
  const workload = e.workload;
  const fixed = new Map<string, Known>(
    [...Object.keys(workload.params), ...(workload.python ? ['python'] : [])].map((p) => [p, { always: true }]),
  );
  const ctx: TemplateContext = {
    e,
    workload,
    uses,
    everywhere: new Set([...fixed.keys(), ...uses.flatMap((u) => u.runs.flatMap((r) => [...r.varied.keys()]))]),
    conditional: new Set(uses.flatMap((u) => u.conditional)),
    prepare: workload.prepare ? command(workload.prepare, 'workload.prepare') : [],
    env: Object.entries(workload.env ?? {}).map(([k, v]): [string, string] => [`workload.env.${k}`, v]),
    reported: new Set<string>(),
    issues,
  };
  checkStageValues(ctx, fixed);
  checkFlagValues(ctx, allTemplates(ctx));
}

/** What the checks of a command workload share. */
interface TemplateContext {
  e: Experiment;
  workload: CommandWorkloadSpec;
  /** How each stage runs the workload, by its kind. */
  uses: readonly StageUse[];
  /** Every name that gets a value in some stage: fixed, searched, swept or set by a claim side. */
  everywhere: Set<string>;
  /** Parameters that applies_when leaves out of some configs. */
  conditional: Set<string>;
  /** The templates of workload.prepare and workload.env, used by every stage: [path, text]. */
  prepare: [string, string][];
  env: [string, string][];
  /** "path name" of each placeholder reported, so that it is reported once. */
  reported: Set<string>;
  issues: Issue[];
}

/** The templates of an argv, each with its path: [path, text]. */
const command = (argv: readonly string[], path: string) =>
  argv.map((arg, j): [string, string] => [`${path}[${j}]`, arg]);

/** The templates one way of running a stage runs: workload.command where it runs it, and its own programs. */
function runCommands(ctx: TemplateContext, run: StageUse['runs'][number]): [string, string][] {
  return [
    ...(run.usesDefault ? command(ctx.workload.command, 'workload.command') : []),
    ...run.commands.flatMap(([path, argv]) => command(argv, path)),
  ];
}

/** Each stage's templates against what that stage knows: fixed, chosen by earlier stages, or its own. */
function checkStageValues(ctx: TemplateContext, fixed: ReadonlyMap<string, Known>): void {
  const known = new Map(fixed);
  ctx.e.stages.forEach((st, i) => {
    const use = ctx.uses[i]!;
    for (const run of use.runs) {
      const mine = new Map(known);
      merge(mine, run.varied);
      checkPlaceholders(ctx, {
        templates: [...runCommands(ctx, run), ...ctx.prepare, ...ctx.env],
        known: mine,
        where: run.side ? `${label(st, i)}, ${run.side}` : label(st, i),
        i,
      });
    }
    if (use.passesOn) for (const run of use.runs) merge(known, run.varied);
  });
}

interface StageTemplates {
  templates: [string, string][];
  /** The parameters that have a value in this stage (or side). */
  known: ReadonlyMap<string, Known>;
  /** The stage (and side) for the message. */
  where: string;
  /** The stage's index. */
  i: number;
}

/** Every placeholder of a stage's templates, each reported at most once. */
function checkPlaceholders(ctx: TemplateContext, stage: StageTemplates): void {
  for (const [path, text] of stage.templates) {
    for (const p of placeholders(text)) {
      const key = `${path} ${p.name}`;
      if (ctx.reported.has(key)) continue;
      const issue = unknownName(ctx, path, p) ?? missingValue(ctx, { stage, path, text, p });
      if (!issue) continue;
      ctx.reported.add(key);
      ctx.issues.push(issue);
    }
  }
}

/** A placeholder that no stage gives a value. */
function unknownName(ctx: TemplateContext, path: string, p: Placeholder): Issue | null {
  if (ctx.everywhere.has(p.name)) return null;
  const hint = closest(p.name, [...ctx.everywhere]);
  // The typo is in the sweep when the template asks for a parameter by its conventional name and the near
  // name is only swept, asked for by no template: the message points there and suggests the template's name.
  const sweptAt = hint === undefined ? undefined : sweptPath(ctx.e, hint);
  if (
    hint !== undefined &&
    sweptAt !== undefined &&
    CONVENTIONAL_NAMES.has(p.name) &&
    !CONVENTIONAL_NAMES.has(hint) &&
    !askedFor(ctx, hint)
  )
    return {
      path: sweptAt,
      message:
        `"${hint}" is swept, but no template asks for it, while ${path} asks for {${p.name}}, which nothing ` +
        `gives a value (did you mean "${p.name}"?)`,
    };
  return {
    path,
    message:
      `{${p.name}} has no value: it is not a fixed parameter, a searched or swept one, ` +
      `or "python"${hint ? ` (did you mean "{${hint}}"?)` : ''}`,
  };
}

/** The parameter names of the ecosystem (DESIGN.md): a near miss of one of them is the typo. */
const CONVENTIONAL_NAMES: ReadonlySet<string> = new Set([
  'batch_size',
  'eval_batch_size',
  'num_workers',
  'prefetch_factor',
  'pin_memory',
  'persistent_workers',
  'empty_cache',
  'precision',
  'alloc_conf',
  'intra_op_threads',
  'inter_op_threads',
  'arena',
]);

/** Where a sweep gives `name` its values (`stages[i].params.name`), when one does and nothing fixes it. */
function sweptPath(e: Experiment, name: string): string | undefined {
  if (e.workload.kind === 'command' && name in e.workload.params) return undefined;
  const i = e.stages.findIndex((st) => st.kind === 'sweep' && name in st.params);
  return i < 0 ? undefined : `stages[${i}].params.${name}`;
}

/** Whether some template of the experiment has a {name} placeholder. */
function askedFor(ctx: TemplateContext, name: string): boolean {
  return allTemplates(ctx).some(([, text]) => placeholders(text).some((q) => q.name === name));
}

/** A required placeholder whose parameter may have no value in this stage. */
function missingValue(
  ctx: TemplateContext,
  { stage, path, text, p }: { stage: StageTemplates; path: string; text: string; p: Placeholder },
): Issue | null {
  if (p.form !== 'required') return null;
  const k = stage.known.get(p.name);
  if (k?.always) return null;
  const fix = fixes(text, path, p, ctx.conditional.has(p.name));
  if (k) {
    return {
      path,
      message: `${JSON.stringify(text)} uses {${p.name}}, which may have no value in stage ${stage.where}: ${k.why}; ${fix}`,
    };
  }
  const later = laterStage(ctx, p.name, stage.i + 1);
  const gets = later
    ? `${p.name} gets a value only in the later stage ${later}`
    : `no stage before it gives ${p.name} a value`;
  return {
    path,
    message: `${JSON.stringify(text)} uses {${p.name}}, which has no value in stage ${stage.where}: ${gets}; ${fix}`,
  };
}

/** Every template that any stage may run, for the flag check. */
function allTemplates(ctx: TemplateContext): [string, string][] {
  return [
    ...command(ctx.workload.command, 'workload.command'),
    ...ctx.prepare,
    ...ctx.env,
    ...ctx.uses.flatMap((u) => u.runs.flatMap((run) => runCommands(ctx, run))),
  ];
}

/** A parameter used as a flag ("{pin_memory?--pin-memory}") takes true or false (or 1/0) wherever it is set. */
function checkFlagValues(ctx: TemplateContext, templates: [string, string][]): void {
  const flags = new Map<string, string>();
  for (const [path, text] of templates)
    for (const p of placeholders(text))
      if (p.form === 'flag' && !flags.has(p.name)) flags.set(p.name, `${p.source} in ${path}`);
  if (flags.size === 0) return;
  const values: (readonly [string, string, unknown])[] = [
    ...Object.entries(ctx.workload.params).map(([p, v]) => [`workload.params.${p}`, p, v] as const),
    ...ctx.uses.flatMap((u) => u.values),
  ];
  for (const [path, p, v] of values) {
    const flag = flags.get(p);
    if (flag !== undefined && flagState(v) === undefined)
      ctx.issues.push({
        path,
        message: `${p} is the flag ${flag}, so its values must be true or false (or 1/0), got ${JSON.stringify(v)}`,
      });
  }
}
