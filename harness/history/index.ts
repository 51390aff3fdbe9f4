// The history index: every finished run under a reports folder, per experiment and per environment
// fingerprint, with its key metrics and chosen config. Entries are cached in <reports>/.history-index.json
// (keyed by run.json's size and mtime), so a history of a thousand nights reads each run.json once.
import { STAGE_KIND_MODULES } from '../engine/kinds/index.js';
import type { KindMetric, MetricOrigin } from '../engine/kinds/types.js';
import type { StageKind, StageOutcomeOf } from '../experiment/schema.js';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, type Stats, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { writeJsonAtomic } from '../store/atomic.js';
import { printedCommand } from '../util/shell.js';
import { JOURNAL_FILE, readJournal } from '../store/journal.js';
import { RUN_FILE } from '../store/run-dir.js';
import { rebuildFromJournal } from '../engine/rebuild.js';
import { z } from 'zod';
import { configSchema, type Fingerprint, isFinished, type TrialRecord } from '../domain/index.js';
import { readRunJson, type RunJson, type RunResult } from '../experiment/run-file.js';

export const INDEX_FILE = '.history-index.json';
/** Held in the reports folder while `history` confirms alarms: one confirmation run at a time. */
export const HISTORY_LOCK_FILE = '.history.lock';
// 2: process-timed throughput is named runs/s (read from the journal of command workloads).
// 3: figures rebuilt from each run's journal (run.json's stored result is not trusted).
// 4: the environment key is the device and the workload's stack (not tunebench's or Node's versions).
const INDEX_VERSION = 4;

/** One key metric of a run: higher is better for every metric tunebench tracks. */
const metricPointSchema = z.object({
  /** Stable across runs: "<stage> <what>", e.g. "threads samples/s (chosen)". */
  name: z.string(),
  stage: z.string(),
  unit: z.string(),
  value: z.number(),
  low: z.number().nullable(),
  high: z.number().nullable(),
});
export type MetricPoint = z.infer<typeof metricPointSchema>;

const runEntrySchema = z.object({
  experiment: z.string(),
  run_id: z.string(),
  dir: z.string(),
  started_at: z.string(),
  /** Short hash of the fingerprint's device, driver and library versions (not host, not commit). */
  env_key: z.string(),
  /** The same, in words. */
  env_label: z.string(),
  git_commit: z.string().nullable(),
  chosen: configSchema,
  metrics: z.array(metricPointSchema),
  /** What rebuilding the figures from the journal said: run.json disagreed (edited), or could not be checked. */
  warning: z.string().optional(),
});
export type RunEntry = z.infer<typeof runEntrySchema>;

export interface HistoryIndex {
  runs: RunEntry[];
  /** Run directories that were skipped, and why (unfinished, stopped, damaged). */
  skipped: { dir: string; why: string }[];
  /** Cache entries that were not trusted (a path that is not where the run lies), in words. */
  warnings: string[];
}

/** Versions of the harness itself: a bump of tunebench or of the Node.js it runs on is not the workload's change. */
const HARNESS_VERSIONS = new Set(['tunebench', 'node']);

/**
 * What makes two runs comparable: the device, its driver and the workload's own stack. For a Python
 * workload that is its interpreter's Python, torch, numpy and torch's CUDA (the fingerprint's `workload`);
 * otherwise the libraries the harness runs the workload with (onnxruntime-node). tunebench's and Node's
 * versions are the harness's and never split a series.
 */
export function environmentKey(env: Fingerprint | undefined): { key: string; label: string } {
  const stack: [string, string][] =
    env?.workload !== undefined
      ? env.workload === null
        ? [['python', 'unknown']]
        : [
            ['python', env.workload.python],
            ...Object.entries(env.workload.packages).sort(([a], [b]) => a.localeCompare(b)),
            ...(env.workload.cuda !== null ? [['CUDA', env.workload.cuda] as [string, string]] : []),
          ]
      : Object.entries(env?.versions ?? {})
          .filter(([k]) => !HARNESS_VERSIONS.has(k))
          .sort(([a], [b]) => a.localeCompare(b));
  const device = env?.gpu
    ? `${env.gpu.count} x ${env.gpu.name}, driver ${env.gpu.driver}`
    : `${env?.cpu.model ?? 'unknown CPU'}, ${env?.cpu.cores ?? '?'} cores, no GPU`;
  const label = `${device}; ${stack.map(([k, v]) => `${k} ${v}`).join(', ')}`;
  const identity = JSON.stringify({
    cpu: env?.cpu ?? null,
    gpu: env?.gpu ? { name: env.gpu.name, driver: env.gpu.driver, count: env.gpu.count } : null,
    stack,
  });
  return { key: createHash('sha256').update(identity).digest('hex').slice(0, 10), label };
}

export type KeyMetric = MetricPoint & { origin: MetricOrigin };

/** The key metrics of a finished run, from its stage results (and its trials: see keyMetricsWithOrigin). */
export function keyMetrics(result: RunResult, records?: readonly TrialRecord[]): MetricPoint[] {
  return keyMetricsWithOrigin(result, records).map(({ origin: _origin, ...point }) => point);
}

/** The unit of a throughput metric whose trials were timed as whole processes (one sample a run). */
export const RUNS_PER_SECOND = 'runs/s';

/**
 * The stages whose successful trials were all timed as whole processes (`tunebench time` of a program
 * without step events): their throughput is runs a second, the inverse of a run's wall time.
 */
function processTimedStages(records: readonly TrialRecord[]): Set<string> {
  const steps = new Set(records.filter((r) => r.outcome === 'ok' && r.timing !== 'process').map((r) => r.stage));
  return new Set(
    records.filter((r) => r.outcome === 'ok' && r.timing === 'process' && !steps.has(r.stage)).map((r) => r.stage),
  );
}

/**
 * The key metrics of a finished run, each with where in its stage's result it came from. With the
 * run's trial records, a process-timed stage's throughput is named and counted in runs/s, not samples/s.
 */
export function keyMetricsWithOrigin(result: RunResult, records: readonly TrialRecord[] = []): KeyMetric[] {
  const wall = processTimedStages(records);
  const rate = (stage: string) => (wall.has(stage) ? RUNS_PER_SECOND : 'samples/s');
  return result.stages.flatMap((s) =>
    kindMetrics(s)
      .filter((m) => Number.isFinite(m.value) && m.value > 0)
      .map((m): KeyMetric => ({
        name: `${s.name} ${m.what.replace('samples/s', rate(s.name))}`,
        stage: s.name,
        unit: m.unit ?? (m.origin.kind === 'speedup' ? 'x' : rate(s.name)),
        value: m.value,
        low: m.low,
        high: m.high,
        origin: m.origin,
      })),
  );
}

/** A stage's key metrics by its kind's module. */
function kindMetrics<K extends StageKind>(s: StageOutcomeOf<K>): KindMetric[] {
  return STAGE_KIND_MODULES[s.kind].keyMetrics(s);
}

/**
 * A finished run as history counts it. Its figures (CIs, the chosen config) come from its journal, as
 * `tunebench report` derives them (engine/rebuild.ts): a run.json edited after the run does not move a trend.
 */
export async function readRunEntry(dir: string): Promise<RunEntry | { why: string }> {
  let run: RunJson;
  try {
    run = readRunJson(dir, 'it is left out of the history');
  } catch (error) {
    return { why: (error as Error).message };
  }
  if (!isFinished(run) || !run.result || run.result.stopped) {
    return {
      why:
        `the run did not finish (status ${run.status ?? 'unknown'}); ` +
        `resume it with ${printedCommand(['tunebench', 'run', '--resume', dir])}`,
    };
  }
  const env = environmentKey(run.environment);
  const journal = journalRecords(dir);
  const rebuilt = journal
    ? await rebuildFromJournal(run, journal, join(dir, JOURNAL_FILE))
    : { run, warning: `its ${JOURNAL_FILE} cannot be read, so the figures in ${RUN_FILE} are shown unchecked` };
  run = rebuilt.run;
  if (!run.result) return { why: 'the run has no result' };
  const records = commandRecords(run, journal ?? []);
  return {
    experiment: run.experiment ?? run.result.experiment,
    run_id: run.run_id ?? run.result.run_id,
    dir,
    started_at: run.started_at ?? '',
    env_key: env.key,
    env_label: env.label,
    git_commit: run.environment?.git_commit ?? null,
    chosen: run.result.chosen,
    metrics: keyMetrics(run.result, records),
    ...(rebuilt.warning ? { warning: rebuilt.warning } : {}),
  };
}

function journalRecords(dir: string): TrialRecord[] | undefined {
  try {
    return readJournal(join(dir, JOURNAL_FILE)).records;
  } catch {
    return undefined;
  }
}

/** The trial records of a command workload's run (which may be timed as whole processes); none for other workloads. */
function commandRecords(run: RunJson, records: TrialRecord[]): TrialRecord[] {
  return (run.resolved['workload'] as { kind?: unknown } | undefined)?.kind === 'command' ? records : [];
}

/** The index cache (<reports>/INDEX_FILE): what each run directory gave, keyed by its run.json's size and time. */
const cacheFileSchema = z.object({
  version: z.literal(INDEX_VERSION),
  entries: z.record(
    z.string(),
    z.object({
      size: z.number(),
      mtime: z.number(),
      /** The journal's size and time too: the figures are rebuilt from it. */
      journal: z.object({ size: z.number(), mtime: z.number() }).nullable().default(null),
      entry: z.union([runEntrySchema, z.object({ why: z.string() })]),
    }),
  ),
});
type CacheFile = z.infer<typeof cacheFileSchema>;

/** Reads (and refreshes the cache of) every run directory under reportsDir/<experiment>/<run-id>/. */
export async function indexRuns(reportsDir: string): Promise<HistoryIndex> {
  const root = resolve(reportsDir);
  if (!existsSync(root) || !statSync(root).isDirectory())
    throw new ConfigError(
      `${reportsDir} is not a folder: ` +
        'pass the reports folder that runs write to (tunebench run --out, default reports)',
    );
  const cachePath = join(root, INDEX_FILE);
  let cache: CacheFile = { version: INDEX_VERSION, entries: {} };
  try {
    // Another version's cache, or a damaged or foreign one, is rebuilt below.
    const read = cacheFileSchema.safeParse(JSON.parse(readFileSync(cachePath, 'utf8')));
    if (read.success) cache = read.data;
  } catch {
    // No cache yet, or a damaged one: rebuilt below.
  }
  const fresh: CacheFile = { version: INDEX_VERSION, entries: {} };
  const runs: RunEntry[] = [];
  const skipped: { dir: string; why: string }[] = [];
  const warnings: string[] = [];
  let changed = false;
  for (const exp of readdirSync(root, { withFileTypes: true })) {
    if (!exp.isDirectory() || exp.name.startsWith('.')) continue;
    for (const run of readdirSync(join(root, exp.name), { withFileTypes: true })) {
      if (!run.isDirectory()) continue;
      const dir = join(root, exp.name, run.name);
      const runFile = join(dir, RUN_FILE);
      let st: Stats;
      try {
        st = lstatSync(runFile);
      } catch {
        continue; // not a run directory (history output, compare output)
      }
      if (!st.isFile()) {
        // A link would make history read (and confirm) a run that lies outside the reports folder.
        skipped.push({
          dir,
          why: `${RUN_FILE} is not a regular file (a symbolic link?): only runs inside the tree count`,
        });
        continue;
      }
      const journal = journalStat(dir);
      const cached = trustedCacheEntry(cache.entries[dir], dir, st, (w) => warnings.push(`${cachePath}: ${w}`));
      const current = cached && sameStat(cached.journal, journal) ? cached : undefined;
      const entry = current?.entry ?? (await readRunEntry(dir));
      if (entry !== current?.entry) changed = true;
      fresh.entries[dir] = { size: st.size, mtime: st.mtimeMs, journal, entry };
      if ('why' in entry) skipped.push({ dir, why: entry.why });
      else runs.push(entry);
    }
  }
  if (changed || Object.keys(cache.entries).length !== Object.keys(fresh.entries).length) {
    try {
      writeJsonAtomic(cachePath, fresh);
    } catch {
      // A read-only reports folder still gets its history, just without the cache.
    }
  }
  runs.sort((a, b) => a.started_at.localeCompare(b.started_at) || a.run_id.localeCompare(b.run_id));
  return { runs, skipped, warnings };
}

/**
 * The cached entry of the run directory `dir` when it is still current (same size and time of
 * run.json) and names `dir` itself; a cache is a file anyone may edit, so an entry that points
 * elsewhere (outside the reports tree, or at another run) is ignored with a warning and the run is
 * read again.
 */
function journalStat(dir: string): { size: number; mtime: number } | null {
  try {
    const st = statSync(join(dir, JOURNAL_FILE));
    return { size: st.size, mtime: st.mtimeMs };
  } catch {
    return null;
  }
}

const sameStat = (a: { size: number; mtime: number } | null, b: { size: number; mtime: number } | null) =>
  a === null ? b === null : b !== null && a.size === b.size && a.mtime === b.mtime;

function trustedCacheEntry(
  cached: CacheFile['entries'][string] | undefined,
  dir: string,
  st: Stats,
  warn: (message: string) => void,
): CacheFile['entries'][string] | undefined {
  if (!cached || cached.size !== st.size || cached.mtime !== st.mtimeMs) return undefined;
  if ('dir' in cached.entry && cached.entry.dir !== dir) {
    warn(
      `the cached entry of ${dir} names ${JSON.stringify(cached.entry.dir)}, which is not that run's folder ` +
        '(the cache was edited); the entry was ignored and the run read again from its run.json',
    );
    return undefined;
  }
  return cached;
}
