// Emits the chosen config as JSON (canonical), a shell .env file and YAML, all with the same values.
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { Evidence } from '../engine/context.js';
import type { Fingerprint } from '../telemetry/fingerprint.js';
import type { Config } from '../trial/record.js';
import { ENV, paramEnvName } from '../workloads/protocol/events.js';
import { writeFileAtomic, writeJsonAtomic } from '../store/atomic.js';
import { finiteInterval } from './figures.js';

export interface ChosenConfig {
  experiment: string;
  run_id: string;
  created_at: string;
  config: Config;
  evidence: Record<string, Evidence>;
  device: { host: string; cpu: string; gpu: string | null; memory_limit_bytes: number | null };
  /** On SLURM: the node (and device class, and job) where the max-batch stage ran inside one allocation. */
  placement?: { stage: string; host: string; device: string; slurm_job: string | null };
  reproduce: { command: string[]; env: Record<string, string> };
}

export function buildChosenConfig(args: {
  experiment: string;
  runId: string;
  config: Config;
  evidence: Record<string, Evidence>;
  fingerprint: Fingerprint;
  memoryLimit: number | null;
  experimentPath: string;
  placement?: ChosenConfig['placement'];
}): ChosenConfig {
  const env: Record<string, string> = { [ENV.config]: JSON.stringify(args.config) };
  for (const [k, v] of Object.entries(args.config)) env[paramEnvName(k)] = String(v);
  return {
    experiment: args.experiment,
    run_id: args.runId,
    created_at: new Date().toISOString(),
    config: args.config,
    evidence: finiteEvidence(args.evidence),
    device: {
      host: args.placement?.host ?? args.fingerprint.host,
      cpu: args.fingerprint.cpu.model,
      gpu: args.placement ? (args.placement.device.startsWith('CPU: ') ? null : args.placement.device) : (args.fingerprint.gpu?.name ?? null),
      memory_limit_bytes: args.memoryLimit,
    },
    ...(args.placement ? { placement: args.placement } : {}),
    reproduce: { command: ['tunebench', 'run', args.experimentPath], env },
  };
}

/** Evidence as a file may carry it: a CI with a non-finite bound is no CI (JSON would write null). */
function finiteEvidence(evidence: Record<string, Evidence>): Record<string, Evidence> {
  return Object.fromEntries(
    Object.entries(evidence).map(([k, e]) => {
      const out: Evidence = { ...e, samples_per_second: finiteInterval(e.samples_per_second) };
      if (out.point !== undefined && !Number.isFinite(out.point)) delete out.point;
      return [k, out];
    }),
  );
}

/** Shell-safe single-quoted value. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export function writeChosenConfig(dir: string, chosen: ChosenConfig): void {
  writeJsonAtomic(join(dir, 'chosen-config.json'), chosen);
  const env = [
    `# tunebench chosen config for ${chosen.experiment} (run ${chosen.run_id})`,
    ...Object.entries(chosen.reproduce.env).map(([k, v]) => `${k}=${shellQuote(v)}`),
    '',
  ].join('\n');
  writeFileAtomic(join(dir, 'chosen-config.env'), env);
  writeFileAtomic(join(dir, 'chosen-config.yaml'), `# tunebench chosen config for ${chosen.experiment} (run ${chosen.run_id})\n${stringify({ config: chosen.config })}`);
}
