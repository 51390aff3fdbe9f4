// Checks the command workload's templates stage by stage: every "{name}" needs a value in every
// stage that runs the command, from what that stage sees (fixed, chosen earlier, or varied by it).
import { closest } from './did-you-mean.js';
import { stageName } from './names.js';
import { placeholders, flagState, type Placeholder } from '../workloads/command/template.js';
import type { Experiment, StageSpec } from './schema.js';

type Issue = { path: string; message: string };

/** Whether a parameter has a value in every config of a stage, or only in some (a conditional one). */
interface Known {
  always: boolean;
  /** Why it may be absent: "applies_when leaves it out where num_workers is 0 (stages[1])". */
  why?: string;
}

const label = (stage: StageSpec, i: number) => `${stageName(stage, i)} (stages[${i}])`;

/** The parameters a stage varies, each with whether every one of its configs has it. */
function varied(stage: StageSpec, i: number): Map<string, Known> {
  const out = new Map<string, Known>();
  if (stage.kind === 'max-batch' || stage.kind === 'compare') out.set(stage.param, { always: true });
  // Every probe of a bucketed stage sets the bucket; with a recipe, probes run with 1 accumulation step.
  if (stage.kind === 'max-batch' && stage.buckets) out.set(stage.buckets.param, { always: true });
  if (stage.kind === 'max-batch' && stage.keep_effective_batch !== undefined)
    out.set(stage.accumulation_param, { always: true });
  if (stage.kind === 'sweep') {
    for (const p of Object.keys(stage.params)) {
      const when = stage.applies_when[p];
      out.set(
        p,
        when === undefined
          ? { always: true }
          : { always: false, why: `applies_when leaves it out where ${when} is 0 or false (stages[${i}])` },
      );
    }
  }
  return out;
}

function merge(into: Map<string, Known>, from: Map<string, Known>): void {
  for (const [p, k] of from) if (!into.get(p)?.always) into.set(p, k);
}

/** The first stage at or after `from` that gives `name` a value, for the message. */
function laterStage(e: Experiment, name: string, from: number): string | undefined {
  for (let j = from; j < e.stages.length; j++) {
    const st = e.stages[j]!;
    const sides = st.kind === 'claim' ? [...Object.keys(st.baseline), ...Object.keys(st.candidate)] : [];
    if (varied(st, j).has(name) || sides.includes(name)) return label(st, j);
  }
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

export function checkTemplates(e: Experiment, issues: Issue[]): void {
  if (e.workload.kind !== 'command') return;
  const workload = e.workload;
  const fixed = new Map<string, Known>(
    [...Object.keys(workload.params), ...(workload.python ? ['python'] : [])].map((p) => [p, { always: true }]),
  );
  const everywhere = new Set<string>(fixed.keys());
  e.stages.forEach((st, i) => {
    for (const p of varied(st, i).keys()) everywhere.add(p);
    if (st.kind === 'claim')
      for (const p of [...Object.keys(st.baseline), ...Object.keys(st.candidate)]) everywhere.add(p);
  });
  const conditional = new Set(e.stages.flatMap((st) => (st.kind === 'sweep' ? Object.keys(st.applies_when) : [])));
  const env = Object.entries(workload.env ?? {}).map(([k, v]): [string, string] => [`workload.env.${k}`, v]);
  const command = (argv: readonly string[], path: string) =>
    argv.map((arg, j): [string, string] => [`${path}[${j}]`, arg]);
  const prepare = workload.prepare ? command(workload.prepare, 'workload.prepare') : [];
  /** A compare's own commands per arm, and whether some arm runs workload.command. */
  const armCommands = (st: StageSpec, i: number) => {
    const own = st.kind === 'compare' ? (st.commands ?? {}) : {};
    const usesDefault = st.kind !== 'compare' || st.arms.some((a) => own[String(a)] === undefined);
    return [
      ...(usesDefault ? command(workload.command, 'workload.command') : []),
      ...Object.entries(own).flatMap(([arm, argv]) => command(argv, `stages[${i}].commands.${JSON.stringify(arm)}`)),
    ];
  };
  const reported = new Set<string>();
  const check = (templates: [string, string][], known: Map<string, Known>, where: string, i: number) => {
    for (const [path, text] of templates) {
      for (const p of placeholders(text)) {
        const key = `${path} ${p.name}`;
        if (reported.has(key)) continue;
        if (!everywhere.has(p.name)) {
          reported.add(key);
          const hint = closest(p.name, [...everywhere]);
          issues.push({
            path,
            message:
              `{${p.name}} has no value: it is not a fixed parameter, a searched or swept one, ` +
              `or "python"${hint ? ` (did you mean "{${hint}}"?)` : ''}`,
          });
          continue;
        }
        if (p.form !== 'required') continue;
        const k = known.get(p.name);
        if (k?.always) continue;
        reported.add(key);
        if (k) {
          issues.push({
            path,
            message:
              `${JSON.stringify(text)} uses {${p.name}}, which may have no value in stage ${where}: ${k.why}; ` +
              `${fixes(text, path, p, conditional.has(p.name))}`,
          });
        } else {
          const later = laterStage(e, p.name, i + 1);
          const gets = later
            ? `${p.name} gets a value only in the later stage ${later}`
            : `no stage before it gives ${p.name} a value`;
          issues.push({
            path,
            message:
              `${JSON.stringify(text)} uses {${p.name}}, which has no value in stage ${where}: ${gets}; ` +
              `${fixes(text, path, p, conditional.has(p.name))}`,
          });
        }
      }
    }
  };
  const known = new Map(fixed);
  e.stages.forEach((st, i) => {
    if (st.kind === 'claim') {
      for (const side of ['baseline', 'candidate'] as const) {
        const own = st[`${side}_command`];
        const sideKnown = new Map(known);
        merge(sideKnown, new Map(Object.keys(st[side]).map((p) => [p, { always: true }])));
        check(
          [
            ...(own ? command(own, `stages[${i}].${side}_command`) : command(workload.command, 'workload.command')),
            ...prepare,
            ...env,
          ],
          sideKnown,
          `${label(st, i)}, ${side} side`,
          i,
        );
      }
      return;
    }
    const mine = new Map(known);
    merge(mine, varied(st, i));
    check([...armCommands(st, i), ...prepare, ...env], mine, label(st, i), i);
    merge(known, varied(st, i));
  });
  checkFlagValues(
    e,
    [
      ...command(workload.command, 'workload.command'),
      ...prepare,
      ...env,
      ...e.stages.flatMap((st, i) =>
        st.kind === 'claim'
          ? [
              ...command(st.baseline_command ?? [], `stages[${i}].baseline_command`),
              ...command(st.candidate_command ?? [], `stages[${i}].candidate_command`),
            ]
          : armCommands(st, i),
      ),
    ],
    issues,
  );
}

/** A parameter used as a flag ("{pin_memory?--pin-memory}") takes true or false (or 1/0) wherever it is set. */
function checkFlagValues(e: Experiment, templates: [string, string][], issues: Issue[]): void {
  const flags = new Map<string, string>();
  for (const [path, text] of templates)
    for (const p of placeholders(text))
      if (p.form === 'flag' && !flags.has(p.name)) flags.set(p.name, `${p.source} in ${path}`);
  if (flags.size === 0) return;
  const values: [string, string, unknown][] = Object.entries(e.workload.params).map(([p, v]) => [
    `workload.params.${p}`,
    p,
    v,
  ]);
  e.stages.forEach((st, i) => {
    if (st.kind === 'sweep')
      for (const [p, spec] of Object.entries(st.params))
        if (Array.isArray(spec))
          for (const [j, v] of spec.entries()) values.push([`stages[${i}].params.${p}[${j}]`, p, v]);
    if (st.kind === 'compare')
      for (const [j, v] of st.arms.entries()) values.push([`stages[${i}].arms[${j}]`, st.param, v]);
    if (st.kind === 'claim')
      for (const side of ['baseline', 'candidate'] as const)
        for (const [p, v] of Object.entries(st[side])) values.push([`stages[${i}].${side}.${p}`, p, v]);
  });
  for (const [path, p, v] of values) {
    const flag = flags.get(p);
    if (flag !== undefined && flagState(v) === undefined)
      issues.push({
        path,
        message: `${p} is the flag ${flag}, so its values must be true or false (or 1/0), got ${JSON.stringify(v)}`,
      });
  }
}
