// Benchmark: max batch per sequence-length bucket, searched together (longest first, neighbours'
// bounds, one memory model across buckets) against one independent search per bucket, through the
// shipped code. Synthetic transformer-like curves (modeled probe seconds), then real trials of a
// plain-Python job under a prlimit cap (test/fixtures/programs/bucket_memory.py). Writes RESULTS.md.
import { join } from 'node:path';
import { findMaxBatchPerBucket } from '../../harness/search/buckets.js';
import { findMaxBatch } from '../../harness/search/max-batch.js';
import type { ProbeFn } from '../../harness/search/probe.js';
import { toProbe } from '../../harness/engine/stages/max-batch.js';
import { runTrial } from '../../harness/trial/run-trial.js';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import { PROGRAMS, tempDir } from '../support/paths.js';
import {
  BUCKET_LENGTHS,
  BUCKET_SEARCH,
  lengthTrueMax,
  lengthWorkload,
  type LengthCurve,
} from '../support/synthetic.js';
import { writeSection } from './results.js';

const COMMAND = 'npm run bench:buckets';
const GiB = 2 ** 30;
const LENGTHS = BUCKET_LENGTHS;
const BASE = BUCKET_SEARCH;

interface Side {
  probes: number;
  seconds: number;
  exact: number;
}

function curves(): { name: string; curve: LengthCurve }[] {
  const out: { name: string; curve: LengthCurve }[] = [];
  // Attention's share varies from none to most of the per-sample memory; readings exact or 1% noisy.
  for (const [label, b, c] of [
    ['linear in tokens', 96 * 1024, 0],
    ['balanced', 64 * 1024, 24],
    ['attention-heavy', 8 * 1024, 96],
  ] as const) {
    for (const noise of [0, 0.01]) {
      for (const seed of [1, 2, 3]) {
        out.push({
          name: `${label}, noise ${noise * 100}%, seed ${seed}`,
          curve: { a: (1 + seed) * GiB, b, c, cap: (16 + 8 * seed) * GiB, noise, seed },
        });
      }
    }
  }
  return out;
}

async function synthetic(): Promise<{ rows: string[]; together: Side; alone: Side; cases: number }> {
  const together: Side = { probes: 0, seconds: 0, exact: 0 };
  const alone: Side = { probes: 0, seconds: 0, exact: 0 };
  const rows: string[] = [];
  const all = curves();
  for (const { name, curve } of all) {
    const opts = { ...BASE, capBytes: curve.cap };
    const w = lengthWorkload(curve);
    const t0 = w.calls.length;
    const r = await findMaxBatchPerBucket(w.runAt, LENGTHS, opts);
    const seconds = (calls: typeof w.calls) =>
      calls
        .filter((c) => c.role === 'probe')
        .reduce(
          (s, c) =>
            s +
            0.5 +
            (c.batch <= (lengthTrueMax(curve, c.length, 8, BASE.ceiling) ?? 0) ? 3 : 1) *
              (0.002 + (c.batch * c.length) / 5e6),
          0,
        );
    const tSec = seconds(w.calls.slice(t0));
    const tExact = r.buckets.filter((b) => b.result.max === lengthTrueMax(curve, b.value, 8, BASE.ceiling)).length;
    let aProbes = 0;
    let aSec = 0;
    let aExact = 0;
    for (const length of LENGTHS) {
      const solo = lengthWorkload(curve);
      const one = await findMaxBatch(solo.runAt(length), opts);
      aProbes += one.probesToMax;
      aSec += seconds(solo.calls);
      if (one.max === lengthTrueMax(curve, length, 8, BASE.ceiling)) aExact += 1;
    }
    together.probes += r.probesToMax;
    together.seconds += tSec;
    together.exact += tExact;
    alone.probes += aProbes;
    alone.seconds += aSec;
    alone.exact += aExact;
    rows.push(`| ${name} | ${r.probesToMax} | ${aProbes} | ${(tSec / aSec).toFixed(2)} | ${tExact}/5 | ${aExact}/5 |`);
  }
  return { rows, together, alone, cases: all.length };
}

const CAP = 160 * 2 ** 20;

/** Real trials: a fresh Python process each, a real MemoryError under prlimit --as. */
async function real(): Promise<{
  together: { probes: number; seconds: number; maxima: (number | null)[] };
  alone: { probes: number; seconds: number; maxima: (number | null)[] };
}> {
  const workload = new CommandWorkload(
    {
      kind: 'command',
      command: [join(PROGRAMS, 'bucket_memory.py')],
      python: '/usr/bin/python3',
      protocol: 'required',
    },
    PROGRAMS,
  );
  const scratch = tempDir();
  let index = 0;
  const runAt =
    (seq: number): ProbeFn =>
    async (batch, role, steps) => {
      const r = await runTrial(
        { workload, limits: { memory: CAP, mechanism: 'prlimit', timeout: 60 }, scratchDir: scratch },
        {
          index: index++,
          stage: 'bench',
          role: { kind: role },
          config: { batch_size: batch, seq },
          measure: { warmupSteps: 1, steps: steps ?? 2 },
        },
      );
      return toProbe(batch, role, r);
    };
  const opts = { ...BASE, ceiling: 1 << 14, capBytes: CAP, confirmSteps: 4, placeBy: 'count' as const };
  const lengths = [64, 128, 256, 512];
  let t = Date.now();
  const r = await findMaxBatchPerBucket(runAt, lengths, opts);
  const together = {
    probes: r.probesToMax,
    seconds: (Date.now() - t) / 1000,
    maxima: r.buckets.map((b) => b.result.max),
  };
  t = Date.now();
  let probes = 0;
  const maxima: (number | null)[] = [];
  for (const seq of [...lengths].reverse()) {
    const one = await findMaxBatch(runAt(seq), opts);
    probes += one.probesToMax;
    maxima.push(one.max);
  }
  return { together, alone: { probes, seconds: (Date.now() - t) / 1000, maxima } };
}

async function main(): Promise<void> {
  const s = await synthetic();
  console.log(`synthetic: ${s.together.probes} probes together vs ${s.alone.probes} alone`);
  const x = await real();
  console.log(
    `real: ${x.together.probes} probes in ${x.together.seconds.toFixed(1)} s together vs ${x.alone.probes} in ${x.alone.seconds.toFixed(1)} s alone`,
  );
  const doc = [
    '## Max batch per sequence-length bucket',
    '',
    `Command: \`${COMMAND}\`. Buckets ${LENGTHS.join(', ')} searched together (longest first; each shorter bucket starts ` +
      "from its longer neighbour's max and is guided by one memory model a + b*B*L + c*B*L^2 across buckets) " +
      'against one independent search per bucket, through the shipped code, multiple_of 8.',
    '',
    `**Synthetic** (${s.cases} curves; probe seconds modeled as in the max-batch bench, 0.5 s start-up plus steps that grow with batch x length): ` +
      `${s.together.probes} probes together against ${s.alone.probes} independent ` +
      `(ratio ${(s.together.probes / s.alone.probes).toFixed(2)}), modeled time ratio ${(s.together.seconds / s.alone.seconds).toFixed(2)}; ` +
      `exact answers ${s.together.exact}/${s.cases * 5} together, ${s.alone.exact}/${s.cases * 5} independent.`,
    '',
    '| curve | probes together | probes independent | time ratio | exact together | exact independent |',
    '| --- | --- | --- | --- | --- | --- |',
    ...s.rows,
    '',
    `**Real trials** (test/fixtures/programs/bucket_memory.py: plain Python, 1 KiB per token + 4 B per batch x seq^2, ` +
      `a fresh process per probe, a real MemoryError under a ${CAP / 2 ** 20} MiB prlimit cap; buckets 64, 128, 256, 512; ` +
      '4-step confirmations): ' +
      `together ${x.together.probes} probes in ${x.together.seconds.toFixed(1)} s, independent ${x.alone.probes} probes in ` +
      `${x.alone.seconds.toFixed(1)} s (wall ratio ${(x.together.seconds / x.alone.seconds).toFixed(2)}, measured side by side in one run); ` +
      `maxima together ${x.together.maxima.join(', ')}, independent ${x.alone.maxima.join(', ')} (longest first).`,
  ].join('\n');
  writeSection('buckets', doc);
}

await main();
