// The SLURM executor on a real single-node cluster (test/slurm/cluster.sh starts munged, slurmctld and
// slurmd): job arrays that split at MaxArraySize, max batch inside one allocation, the same answer as
// the local executor, a prediction confirmed per GPU type (node features), cancelled and failing tasks,
// and a coordinator killed and then collected.
import { warningText } from '../../harness/report/warnings.js';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { before, describe, it } from 'node:test';
import { execa } from 'execa';
import { z } from 'zod';
import { readBatch, type BatchFile } from '../../harness/executors/slurm/batch.js';
import { stageDoneSchema } from '../../harness/executors/slurm/worker.js';
import { readJournal } from '../../harness/store/journal.js';
import { readCheckedJson } from '../../harness/util/checked-json.js';
import { readTrace, trialKey, type Trace } from '../support/faults.js';
import { CLI, FIXTURES, tempDir } from '../support/paths.js';
import { makeBisectRepo } from '../support/bisect-repo.js';
import { runDir } from '../support/runs.js';
import { requireSystem } from '../support/system.js';
import { startCluster } from '../support/slurm-cluster.js';
import { waitFor } from '../support/wait.js';
import type { TrialRecord } from '../../harness/domain/index.js';
import { readRunJson } from '../../harness/experiment/run-file.js';

const EXPERIMENT = join(FIXTURES, 'experiments', 'slurm.yaml');
const CARDS = join(FIXTURES, 'experiments', 'slurm-cards.yaml');
const skip = requireSystem('slurm');

const cli = (args: string[]) => execa(process.execPath, [CLI, ...args], { reject: false });

/** A copy of the SLURM experiment with changes, in its own folder next to the original (relative paths hold). */
function variant(name: string, edit: (text: string) => string): string {
  // Same stages, same trials: only the hold per step (or the executor) differs.
  const path = join(FIXTURES, 'experiments', `.${name}.generated.yaml`);
  writeFileSync(path, edit(readFileSync(EXPERIMENT, 'utf8')).replace(/^name: slurm$/m, `name: ${name}`));
  return path;
}

/** A one-round sweep of 2 trials per num_workers value (hold ms per step) on the simulated GPU, for the fault tests. */
function sweepOnly(
  name: string,
  o: { holdMs: number; concurrent: number; retries: number; workers?: number[] },
): string {
  const path = join(FIXTURES, 'experiments', `.${name}.generated.yaml`);
  writeFileSync(
    path,
    [
      `name: ${name}`,
      'workload:',
      '  kind: command',
      `  command: [node, ../programs/simulated-gpu.mjs, "--hold-ms=${o.holdMs}"]`,
      '  protocol: required',
      '  params: { device: cuda, batch_size: 64 }',
      'limits: { timeout: 60s }',
      'measure: { warmup_steps: 1, steps: 3 }',
      `executor: { kind: slurm, max_concurrent: ${o.concurrent}, retries: ${o.retries}, poll: 500ms }`,
      'stages:',
      `  - { kind: sweep, name: loader, params: { num_workers: [${(o.workers ?? [0, 2, 4]).join(', ')}], ` +
        'prefetch_factor: [2, 4] }, strategy: grid, repeats: 1 }',
      '',
    ].join('\n'),
  );
  return path;
}

/** What this test reads of chosen-config.json: where the max-batch stage ran. */
const placementSchema = z.object({
  placement: z.object({ stage: z.string(), host: z.string(), device: z.string(), slurm_job: z.string().nullable() }),
});

function batches(dir: string): { id: string; batch: BatchFile }[] {
  const root = join(dir, 'slurm');
  return readdirSync(root)
    .filter((d) => /^b\d+$/.test(d))
    .map((id) => ({ id, batch: readBatch(join(root, id))! }));
}

/** The sweep's batch once it was submitted: its directory and first job id. */
function sweepBatch(out: string, name: string): { dir: string; id: string; job: string } | null {
  const dir = runDir(out, name);
  const b = batches(dir).find((x) => x.batch.specs[0]?.stage === 'loader' && x.batch.submissions.length > 0);
  return b ? { dir, id: b.id, job: b.batch.submissions[0]!.job_id } : null;
}

describe('the slurm executor on a real cluster', { skip, timeout: 15 * 60_000 }, () => {
  let local: Trace;
  before(async () => {
    await startCluster();
    const out = tempDir();
    const r = await cli(['run', EXPERIMENT, '--executor', 'local', '--out', out, '--quiet']);
    assert.equal(r.exitCode, 0, r.stderr);
    local = readTrace(runDir(out, 'slurm'));
  });

  it(
    'runs the sweep as job arrays (split at MaxArraySize), ' +
      'max batch in one allocation, and chooses what the local executor chose',
    async () => {
      const out = tempDir();
      const r = await cli(['run', EXPERIMENT, '--out', out]);
      assert.equal(r.exitCode, 0, r.stderr);
      const dir = runDir(out, 'slurm');
      const trace = readTrace(dir);
      assert.deepEqual(trace.chosen, local.chosen);
      assert.deepEqual(trace.records.map(trialKey), local.records.map(trialKey));
      // Every trial ran in a SLURM job on this node, and says so.
      assert.ok(
        trace.records.every((t) => t.node?.slurm_job && t.node.device.length > 0),
        'node on every record',
      );
      // Each sweep round (4 configs) and each compare round (2 arms) went out as one job array.
      const rounds = (stage: string) =>
        batches(dir)
          .filter((b) => b.batch.specs[0]!.stage === stage)
          .map((b) => b.batch.specs.length);
      assert.deepEqual(rounds('loader'), [4, 4]);
      assert.deepEqual(rounds('variant'), [2, 2]);
      // The max-batch stage ran inside one allocation: its own journal and done.json.
      const done = readCheckedJson(
        stageDoneSchema,
        join(dir, 'slurm', 'stage-0', 'done.json'),
        'done.json of a stage allocation',
        'a bug',
      );
      const chosen = readCheckedJson(placementSchema, join(dir, 'chosen-config.json'), 'chosen-config.json', 'a bug');
      assert.equal(chosen.placement.stage, 'max-batch-1');
      assert.equal(chosen.placement.host, done.node.host);
      const probes = trace.records.filter((t) => t.stage === 'max-batch-1' && t.role.kind !== 'final-confirm');
      assert.equal(new Set(probes.map((t) => t.node!.slurm_job)).size, 1, 'every probe in the same job');
      // The final config (workers, prefetch, variant) differs from the search's: the chosen batch ran
      // once more with it, as a SLURM job of its own, after the last stage.
      const final = trace.records.filter((t) => t.role.kind === 'final-confirm');
      assert.equal(final.length, 1);
      assert.equal(final[0]!.outcome, 'ok');
      assert.ok(final[0]!.node?.slurm_job && !probes.some((t) => t.node!.slurm_job === final[0]!.node!.slurm_job));
      assert.match(
        readFileSync(join(dir, 'summary.md'), 'utf8'),
        /Configuration matrix per device class \(SLURM\)[\s\S]*\| CPU: /,
      );
      assert.match(r.stderr, /slurm: submitted job \d+: \d+ trial\(s\) of b\d+ as --array=0-\d+%2/);

      // A coordinator that stopped halfway through merging a round: cut the journal inside the second
      // sweep batch and mark the run unfinished. collect takes the rest from the task files already
      // written, and submits nothing.
      const loader = batches(dir)
        .filter((b) => b.batch.specs[0]!.stage === 'loader')
        .sort((a, b) => a.batch.first - b.batch.first)[1]!;
      const keep = loader.batch.first + 2;
      const lines = readFileSync(join(dir, 'trials.jsonl'), 'utf8').trim().split('\n');
      writeFileSync(join(dir, 'trials.jsonl'), `${lines.slice(0, keep).join('\n')}\n`);
      const run = readRunJson(dir, 'a bug');
      writeFileSync(join(dir, 'run.json'), JSON.stringify({ ...run, status: 'running', result: undefined }));
      const dirsBefore = readdirSync(join(dir, 'slurm')).sort();
      const submissionsBefore = batches(dir).map((b) => b.batch.submissions.length);
      const again = await cli(['collect', dir]);
      assert.equal(again.exitCode, 0, again.stderr);
      assert.doesNotMatch(again.stderr, /submitted job/);
      assert.deepEqual(readdirSync(join(dir, 'slurm')).sort(), dirsBefore);
      assert.deepEqual(
        batches(dir).map((b) => b.batch.submissions.length),
        submissionsBefore,
      );
      assert.deepEqual(readFileSync(join(dir, 'trials.jsonl'), 'utf8').trim().split('\n'), lines);
    },
  );

  it(
    'confirms a prediction per GPU type: a stage on gpu80 predicts the 40 GB card, ' +
      'a stage on gpu40 (predicted_by) measures it, and the config stays the first stage',
    async () => {
      const out = tempDir();
      // The fake nvidia-smi reports the card of the job's feature (an A100-80GB or an A100-40GB); sbatch
      // passes PATH on to the jobs.
      const r = await execa(process.execPath, [CLI, 'run', CARDS, '--out', out], {
        reject: false,
        env: { PATH: `${join(FIXTURES, 'bin')}${delimiter}${process.env['PATH'] ?? ''}` },
      });
      assert.equal(r.exitCode, 0, r.stderr);
      const dir = runDir(out, 'slurm-cards');
      const trace = readTrace(dir);
      const of = (stage: string) => trace.records.filter((t) => t.stage === stage);
      assert.deepEqual([...new Set(of('a100-80').map((t) => t.node?.device))], ['NVIDIA A100-SXM4-80GB']);
      assert.deepEqual([...new Set(of('a100-40').map((t) => t.node?.device))], ['NVIDIA A100-SXM4-40GB']);
      // Exact on each card, from the journal: the max ran, max + multiple_of ran out of memory.
      const ran = (stage: string, batch: number) => of(stage).filter((t) => t.config['batch_size'] === batch);
      for (const [stage, max] of [
        ['a100-80', 392],
        ['a100-40', 192],
      ] as const) {
        assert.ok(
          ran(stage, max).some((t) => t.outcome === 'ok'),
          `${stage}: ${max} ran`,
        );
        assert.ok(ran(stage, max + 8).length > 0, `${stage}: ${max + 8} was probed`);
        assert.ok(
          ran(stage, max + 8).every((t) => t.outcome === 'oom'),
          `${stage}: ${max + 8} ran out of memory`,
        );
      }
      const stages = readRunJson(dir, 'a bug').result!.stages;
      const first = stages.find((s) => s.name === 'a100-80');
      const second = stages.find((s) => s.name === 'a100-40');
      assert.ok(first?.kind === 'max-batch' && second?.kind === 'max-batch');
      assert.deepEqual(second.result.device_confirmation, {
        of_stage: 'a100-80',
        device: 'NVIDIA A100-SXM4-40GB',
        host: second.result.device_confirmation!.host,
        memory_bytes: 40960 * 2 ** 20,
        predicted: 192,
        measured: 192,
        status: 'exact',
        probes: second.result.probesToMax,
      });
      assert.deepEqual(
        first.result
          .predictions!.rows.filter((row) => row.measured != null)
          .map((row) => [row.card, row.predicted, row.measured]),
        [['40 GB', 192, 192]],
      );
      // The confirming stage chose nothing: the config is the first stage's.
      assert.deepEqual(second.chosen, {});
      assert.equal(trace.chosen['batch_size'], 392);
      const summary = readFileSync(join(dir, 'summary.md'), 'utf8');
      assert.match(
        summary,
        /\| device \| memory \| predicted max batch_size \(from a100-80\) \| measured max batch_size \| probes \|\n.*\n\| NVIDIA A100-SXM4-40GB \(.+\) \| 40\.00 GiB \| 192 \(prediction\) \| 192 \| \d+ \|/,
      );
      assert.match(summary, /\| 40 GB \| 192 \(prediction\) \| 54 \| 192 \|/);
    },
  );

  it("bisects on the cluster: each look's rounds are one job array, run in the commit's worktree", async () => {
    const dir = tempDir('tunebench-bisect-');
    // A threefold slowdown: the test is about where and how the trials run, not about statistical power.
    const shas = makeBisectRepo(dir, { commits: 4, slowAt: 3, slowdown: 2, work: 60000 });
    const file = join(tempDir(), 'bisect-slurm.yaml');
    writeFileSync(
      file,
      [
        'name: bisect-slurm',
        'workload: { kind: command, command: [sh, work.sh] }',
        'limits: { timeout: 60s }',
        'measure: { warmup_steps: 0, steps: 1 }',
        // One task at a time: the two trials of a round do not share the node's cores.
        'executor: { kind: slurm, max_concurrent: 1, retries: 1, poll: 500ms }',
        'stages: [{ kind: compare, param: commit, arms: [a, b] }]',
        '',
      ].join('\n'),
    );
    const out = tempDir();
    const args = ['bisect', '--repo', dir, '--good', shas[0]!, '--bad', shas.at(-1)!, '--min-rounds', '4'];
    const r = await cli([...args, '--max-rounds', '4', '--no-draw', '--out', out, file]);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^first bad commit: ${shas[3]!.slice(0, 12)} commit 3: the slow change`, 'm'));
    const run = /run directory: (.+)/.exec(r.stdout)![1]!.trim();
    const records = readJournal(join(run, 'trials.jsonl')).records;
    // Every trial ran as an array task on the node, in the worktree of the commit it names.
    assert.ok(records.length > 0 && records.every((t) => t.outcome === 'ok' && t.node?.slurm_job), r.stderr);
    const arrays = batches(run).filter((b) => b.batch.specs[0]?.stage === 'bisect');
    // As in a compare stage, each round (the good commit and the tested one, in the round's order) is one array:
    // the check and two steps, 4 rounds each at least.
    assert.ok(arrays.length >= 12, `${arrays.length} arrays`);
    for (const b of arrays)
      assert.deepEqual(
        b.batch.specs.map((t) => t.config['commit']).sort(),
        [shas[0]!, b.batch.specs.find((t) => t.config['commit'] !== shas[0])!.config['commit']].sort(),
      );
    assert.equal(records.length, arrays.length * 2);
    assert.match(r.stderr, /slurm: submitted job \d+: 2 trial\(s\) of b\d+ as --array=0-1%1/);
    // The coordinator removed the worktrees once the bisection ended.
    assert.deepEqual(readdirSync(run).includes('worktrees'), false);
  });

  it('splits an array larger than MaxArraySize into several submissions', async () => {
    const wide = sweepOnly('slurm-wide', { holdMs: 5, concurrent: 4, retries: 1, workers: [0, 1, 2, 3, 4, 5] });
    const out = tempDir();
    const r = await cli(['run', wide, '--out', out, '--quiet']);
    assert.equal(r.exitCode, 0, r.stderr);
    const sweep = batches(runDir(out, 'slurm-wide')).find((b) => b.batch.specs[0]!.stage === 'loader')!;
    assert.equal(sweep.batch.specs.length, 12);
    assert.deepEqual(
      sweep.batch.submissions.map((s) => [s.offset, s.tasks.length]),
      [
        [0, 10],
        [10, 2],
      ],
    );
    const trials = readTrace(runDir(out, 'slurm-wide')).records;
    assert.equal(trials.length, 12);
    assert.ok(trials.every((t) => t.outcome === 'ok' && t.node));
  });

  it(
    'cancelled array tasks are reported and run again when retries allow; ' +
      'a task that keeps failing is recorded as a crash',
    async () => {
      const slow = sweepOnly('slurm-slow', { holdMs: 250, concurrent: 1, retries: 1, workers: [0, 2] });
      const out = tempDir();
      const child = execa(process.execPath, [CLI, 'run', slow, '--out', out], { reject: false });
      const b = await waitFor('the sweep batch', () => sweepBatch(out, 'slurm-slow'));
      // Task 3 cannot write its record (its result path is a folder): it fails on every attempt.
      mkdirSync(join(b.dir, 'slurm', b.id, 'task-3.json'));
      // Cancel task 0 while it runs, and task 2 (not next in line) before it starts.
      await waitFor('task 0 running', async () =>
        (await execa('squeue', ['--array', '--noheader', `--jobs=${b.job}`, '--format=%i %T'])).stdout.includes(
          `${b.job}_0 RUNNING`,
        )
          ? true
          : null,
      );
      await execa('scancel', [`${b.job}_0`, `${b.job}_2`]);
      const r = await child;
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          `task ${b.job}_0 \\(trial \\d+\\) ended CANCELLED without a record; submitting it again \\(attempt 2 of 2\\)`,
        ),
      );
      // Without accounting (this cluster has no slurmdbd) a task cancelled while pending leaves no trace:
      // it is retried as UNKNOWN.
      assert.match(
        r.stderr,
        new RegExp(
          `task ${b.job}_2 \\(trial \\d+\\) ` +
            `ended UNKNOWN \\(it left the queue.*submitting it again \\(attempt 2 of 2\\)`,
        ),
      );
      assert.match(r.stderr, /ended FAILED without a record; submitting it again \(attempt 2 of 2\)/);
      const trace = readTrace(b.dir);
      const sweep = trace.records.filter((t) => t.stage === 'loader');
      const failed = sweep.filter((t) => t.outcome !== 'ok');
      assert.equal(failed.length, 1, JSON.stringify(failed.map((t) => t.reason)));
      assert.match(
        failed[0]!.reason,
        /^SLURM task \d+_3 ended FAILED after 2 attempt\(s\) without writing a trial record/,
      );
      // The cancelled tasks ran again: every other trial is a real record from a SLURM job.
      assert.equal(sweep.filter((t) => t.outcome === 'ok' && t.node).length, sweep.length - 1);
      assert.deepEqual(
        trace.records.map((x) => x.index),
        trace.records.map((_, i) => i),
      );
      const warnings = (readRunJson(b.dir, 'a bug').result?.warnings ?? []).map(warningText);
      assert.ok(
        warnings.some((w) => /CANCELLED/.test(w)) && warnings.some((w) => /recorded as a crash/.test(w)),
        warnings.join('\n'),
      );
    },
  );

  it('with retries 0 a cancelled task is recorded as a failed trial with the SLURM state', async () => {
    const once = sweepOnly('slurm-once', { holdMs: 250, concurrent: 1, retries: 0, workers: [0] });
    const out = tempDir();
    const child = execa(process.execPath, [CLI, 'run', once, '--out', out, '--quiet'], { reject: false });
    const b = await waitFor('the sweep batch', () => sweepBatch(out, 'slurm-once'));
    await waitFor('task 1 running', async () =>
      (await execa('squeue', ['--array', '--noheader', `--jobs=${b.job}`, '--format=%i %T'])).stdout.includes(
        `${b.job}_1 RUNNING`,
      )
        ? true
        : null,
    );
    await execa('scancel', [`${b.job}_1`]);
    const r = await child;
    assert.equal(r.exitCode, 0, r.stderr);
    const cancelled = readTrace(b.dir).records.filter((t: TrialRecord) => t.outcome === 'crash');
    assert.equal(cancelled.length, 1, cancelled.map((t) => t.reason).join('\n'));
    assert.match(cancelled[0]!.reason, new RegExp(`^SLURM task ${b.job}_1 ended CANCELLED after 1 attempt\\(s\\)`));
  });

  it(
    'a killed coordinator loses nothing: ' +
      'tunebench collect gathers the tasks and finishes the run, and is idempotent',
    async () => {
      const slow = variant('slurm-kill', (t) => t.replace('--hold-ms=10', '--hold-ms=60'));
      const out = tempDir();
      const child = execa(process.execPath, [CLI, 'run', slow, '--out', out, '--quiet'], { reject: false });
      const b = await waitFor('the sweep batch', () => sweepBatch(out, 'slurm-kill'));
      child.kill('SIGKILL');
      await child;
      const before = readFileSync(join(b.dir, 'trials.jsonl'), 'utf8');
      const r = await cli(['collect', b.dir]);
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(r.stdout, /slurm-kill collected: \d+ trials/);
      const trace = readTrace(b.dir);
      assert.ok(readFileSync(join(b.dir, 'trials.jsonl'), 'utf8').startsWith(before), 'the journal only grew');
      assert.deepEqual(trace.records.map(trialKey), local.records.map(trialKey));
      assert.deepEqual(trace.chosen, local.chosen);
      // The batch the killed coordinator submitted was collected, not submitted again.
      const sweep = batches(b.dir).find((x) => x.id === b.id)!;
      assert.equal(sweep.batch.submissions.length, Math.ceil(4 / 10));
      const again = await cli(['collect', b.dir]);
      assert.equal(again.exitCode, 0);
      assert.match(again.stdout, /already collected/);
    },
  );

  it('--no-wait submits and returns; collect finishes the run', async () => {
    const quick = sweepOnly('slurm-nowait', { holdMs: 5, concurrent: 4, retries: 1, workers: [0] });
    const out = tempDir();
    const r = await cli(['run', quick, '--out', out, '--no-wait', '--quiet']);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(
      r.stderr,
      /tunebench: submitted: 2 trial\(s\) of b0 are queued or running as SLURM job \d+; \d+ trial\(s\) are journaled\. Gather the results with: tunebench collect /,
    );
    const dir = runDir(out, 'slurm-nowait');
    assert.equal(readRunJson(dir, 'a bug').status, 'waiting');
    const done = await cli(['collect', dir, '--quiet']);
    assert.equal(done.exitCode, 0, done.stderr);
    const trials = readTrace(dir).records;
    assert.equal(trials.length, 2);
    assert.ok(trials.every((t) => t.outcome === 'ok' && t.node));
    // One submission: collect picked up the batch that --no-wait submitted.
    assert.equal(batches(dir)[0]!.batch.submissions.length, 1);
  });
});
