// A workload whose cost is known exactly: each step runs `work` x `units` units of the same integer
// arithmetic. `work: 1.1` is exactly 10% more work per step, `work: 0.4` is a 2.5x speedup. Used to
// validate the claim statistics (test/bench/claims.bench.ts); speaks the tunebench protocol.
import { appendFileSync } from 'node:fs';

const config = JSON.parse(process.env.TUNEBENCH_CONFIG ?? '{}');
// `--work=X` on the command line overrides the config, so two commands can differ in work alone.
const flag = process.argv.find((a) => a.startsWith('--work='));
const work = Number(flag ? flag.slice('--work='.length) : (config.work ?? 1));
const units = Number(config.units ?? 2000);
const batch = Number(config.batch_size ?? 1);
const warmup = Number(process.env.TUNEBENCH_WARMUP_STEPS ?? 0);
const steps = Number(process.env.TUNEBENCH_STEPS ?? 10);
const events = process.env.TUNEBENCH_EVENTS;
if (!(work > 0) || !(units > 0)) {
  if (events) appendFileSync(events, `${JSON.stringify({ event: 'error', message: `work and units must be positive, got ${work} and ${units}` })}\n`);
  process.exit(87);
}

/** One unit: 1000 rounds of an xorshift step; the checksum keeps the JIT from removing it. */
function unit(seed) {
  let x = seed | 1;
  for (let i = 0; i < 1000; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
  }
  return x;
}

const perStep = Math.round(units * work);
let checksum = 0;
for (let s = 0; s < warmup + steps; s++) {
  const t0 = process.hrtime.bigint();
  for (let u = 0; u < perStep; u++) checksum = (checksum + unit(u + s)) | 0;
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (events) appendFileSync(events, `${JSON.stringify({ event: 'step', samples: batch, seconds, warmup: s < warmup, checksum })}\n`);
}
if (events) appendFileSync(events, `${JSON.stringify({ event: 'done' })}\n`);
