// Progress on the terminal: a live status line on a TTY, plain log lines otherwise, nothing with --quiet.
// The engine reports through the Progress interface (executors/progress.ts); this is the CLI's rendering.
import { formatBytes, formatSeconds } from '../experiment/units.js';
import type { WorkloadEvent } from '../workloads/protocol/events.js';
import { SILENT_PROGRESS, type Progress, type TrialStartInfo } from '../executors/progress.js';
import { runSeconds, type Config, type TrialRecord } from '../domain/index.js';

export type { Progress, TrialStartInfo };

export type ProgressMode = 'tty' | 'plain' | 'quiet';

/** In plain (piped) output, a long trial prints a line at least this often: its steps and memory so far. */
export const HEARTBEAT_SECONDS = 30;

export function createProgress(
  mode: ProgressMode,
  stream: NodeJS.WritableStream = process.stderr,
  heartbeatSeconds = HEARTBEAT_SECONDS,
): Progress {
  return mode === 'quiet' ? SILENT_PROGRESS : new StreamProgress(stream, mode === 'tty', heartbeatSeconds);
}

/**
 * Characters a terminal acts on: C0 controls (line breaks included), DEL, C1 controls (0x9b is a
 * CSI), and the Unicode line separators and bidirectional overrides that reorder what is shown.
 */
const TERMINAL_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text for the terminal, with every control character shown as an escape (`\x1b`, `\r`, `\u202e`):
 * messages, reasons and parameter values come from workloads and experiment files, and must not
 * move the cursor, retitle the window or clear the screen. tunebench's own sequences are added after.
 */
/** terminalText for text of several lines: each line escaped, the line breaks kept. */
export function terminalLines(text: string): string {
  return text.split('\n').map(terminalText).join('\n');
}

export function terminalText(text: string): string {
  return text.replace(TERMINAL_CONTROLS, (c) => {
    const code = c.charCodeAt(0);
    return (
      NAMED[c] ??
      (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`)
    );
  });
}

export function describeConfig(config: Config, keys?: readonly string[]): string {
  return Object.entries(config)
    .filter(([k]) => !keys || keys.includes(k))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
}

/** A message cut for a progress line; the record and summary.md keep it whole. */
const short = (m: string) => (m.length > 120 ? `${m.slice(0, 117)}...` : m);

export function describeOutcome(r: TrialRecord): string {
  // A program timed as a whole process has no samples/s of its own: its wall time is the figure. A failed
  // trial has none either (its steps before the failure are not its throughput): the exception is shown.
  const sps =
    r.outcome === 'ok' &&
    r.timing !== 'process' &&
    typeof r.samples_per_second === 'number' &&
    Number.isFinite(r.samples_per_second)
      ? ` ${r.samples_per_second.toFixed(1)} samples/s`
      : '';
  const error =
    r.outcome !== 'ok' && r.error ? `: ${short(r.error.message)}${r.error.where ? ` (${r.error.where})` : ''}` : '';
  return `${r.outcome}${error}${sps} (${formatSeconds(r.timing === 'process' ? runSeconds(r) : r.wall_seconds)})`;
}

class StreamProgress implements Progress {
  private readonly started = Date.now();
  private stageName = '';
  private current: TrialStartInfo | undefined;
  private currentSince = Date.now();
  private last: TrialRecord | undefined;
  private steps = 0;
  /** The last memory a step of the current trial reported. */
  private memory: number | undefined;
  private lastLine = Date.now();
  private trialSeconds: number[] = [];
  /** The current stage's trials' wall times: its own rest is estimated from them once there are any. */
  private stageSeconds: number[] = [];
  private ticker: NodeJS.Timeout | undefined;
  private planned: readonly { name: string; trials: number }[] = [];

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly tty: boolean,
    private readonly heartbeatSeconds = HEARTBEAT_SECONDS,
  ) {
    // A terminal gets a live status line; a pipe or a log gets a heartbeat line while a trial runs long.
    this.ticker = tty
      ? setInterval(() => this.render(), 500)
      : setInterval(() => this.heartbeat(), Math.min(5000, this.heartbeatSeconds * 250));
    this.ticker.unref();
  }

  plan(stages: readonly { name: string; trials: number }[]): void {
    this.planned = stages;
  }

  stage(name: string, description: string): void {
    this.stageName = name;
    this.stageSeconds = [];
    this.line(`== stage ${name}: ${description}`);
  }

  trialStart(info: TrialStartInfo): void {
    this.current = info;
    this.currentSince = Date.now();
    this.lastLine = this.currentSince;
    this.steps = 0;
    this.memory = undefined;
    if (!this.tty) return;
    this.render();
  }

  trialEvent(event: WorkloadEvent): void {
    if (event.event !== 'step') return;
    this.steps += 1;
    if (typeof event.memory_bytes === 'number') this.memory = event.memory_bytes;
  }

  /** In plain output: a line at least every heartbeatSeconds while a trial runs, with its steps and memory. */
  private heartbeat(): void {
    const c = this.current;
    const now = Date.now();
    if (!c || now - this.lastLine < this.heartbeatSeconds * 1000) return;
    const memory = this.memory !== undefined ? `, memory ${formatBytes(this.memory)}` : '';
    this.line(
      `[${this.stageName}] trial ${c.n} ${c.role} ${describeConfig(c.config, c.show)} still running: ` +
        `${this.steps} step${this.steps === 1 ? '' : 's'}${memory}, ${formatSeconds((now - this.currentSince) / 1000)} so far`,
    );
  }

  trialEnd(record: TrialRecord): void {
    this.last = record;
    this.trialSeconds.push(record.wall_seconds);
    this.stageSeconds.push(record.wall_seconds);
    const c = this.current;
    const head = c ? `[${this.stageName}] trial ${c.n}/~${Math.max(c.n, c.ofAbout)} ${c.role}` : `[${this.stageName}]`;
    const timing = this.timing();
    this.current = undefined;
    this.line(`${head} ${describeConfig(record.config, c?.show)} -> ${describeOutcome(record)}  ${timing}`);
  }

  note(message: string): void {
    this.line(`   ${message}`);
  }

  finish(): void {
    if (this.ticker) clearInterval(this.ticker);
    if (this.tty) this.out.write('\r\x1b[K');
  }

  private timing(): string {
    const elapsed = (Date.now() - this.started) / 1000;
    const c = this.current;
    const mean = this.trialSeconds.length > 0 ? average(this.trialSeconds) : undefined;
    let stage: number | undefined;
    if (c?.etaSeconds !== undefined) {
      // The stage's estimate covered this trial too: what is left of it after this trial's time.
      stage = Math.max(0, c.etaSeconds - (Date.now() - this.currentSince) / 1000);
    } else if (c && mean !== undefined && c.ofAbout - c.n > 0) {
      // A stage's trials are alike (a sweep's all run measure.steps): its own mean, not the run's (a max-batch
      // stage's confirmations run many times longer).
      const own = this.stageSeconds.length > 0 ? average(this.stageSeconds) : mean;
      stage = (c.ofAbout - c.n) * own;
    }
    // Past the estimate (a race that keeps more configs than expected), a stage's end is not known.
    const parts = [`elapsed ${formatSeconds(elapsed)}`];
    if (stage !== undefined && stage > 0) parts.push(`eta ~${formatSeconds(stage)}`);
    // The whole run: this stage's rest and the later stages' planned trials at the mean trial's time.
    const at = this.planned.findIndex((s) => s.name === this.stageName);
    const later = at < 0 ? 0 : this.planned.slice(at + 1).reduce((a, s) => a + s.trials, 0);
    if (later > 0 && mean !== undefined) parts.push(`run ~${formatSeconds((stage ?? 0) + later * mean)}`);
    return parts.join(', ');
  }

  private line(text: string): void {
    this.lastLine = Date.now();
    const safe = terminalText(text);
    this.out.write(this.tty ? `\r\x1b[K${safe}\n` : `${safe}\n`);
    if (this.tty) this.render();
  }

  private render(): void {
    if (!this.tty || !this.current) return;
    const c = this.current;
    const last = this.last ? ` | last: ${describeOutcome(this.last)}` : '';
    const status = terminalText(
      `[${this.stageName}] trial ${c.n}/~${Math.max(c.n, c.ofAbout)} ` +
        `${describeConfig(c.config, c.show)} step ${this.steps}${last} | ${this.timing()}`,
    );
    const width = (this.out as NodeJS.WriteStream).columns || 120;
    this.out.write(`\r\x1b[K${status.slice(0, Math.max(20, width - 1))}`);
  }
}

const average = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
