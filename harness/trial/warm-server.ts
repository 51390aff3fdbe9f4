// Warm start: a Python server (the adapter's tunebench_warm.py) that ran the script's imports and
// setup() once and forks one child per trial. This file starts it, asks it for forks and hears of exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { TailBuffer } from './tail.js';

/** The environment variable that turns the script's `tunebench.main()` into the warm server. */
export const WARM_SERVER_ENV = 'TUNEBENCH_WARM_SERVER';
/** Seconds the server may take to answer a fork request before it counts as broken. */
export const FORK_REPLY_SECONDS = 10;

export interface WarmServerSpec {
  /** The script's command (the first trial's); the server re-reads nothing of it per trial. */
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string;
  /** Seconds the imports and setup() may take before the server is given up. */
  readySeconds: number;
}

export interface ForkRequest {
  id: string;
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string;
  stderrPath: string;
  memoryBytes: number | null;
  cgroupProcs: string | null;
}

export interface ForkedTrial {
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The server could not fork a trial (refused, gone or silent); the trial can still run afresh. */
export class WarmForkError extends Error {
  override readonly name = 'WarmForkError';
}

type Reply =
  | { op: 'ready'; pid: number }
  | { op: 'refused'; id?: string; reason: string }
  | { op: 'forked'; id: string; pid: number }
  | { op: 'exit'; id: string; pid: number; code: number | null; signal: number | null };

/** Pipes are sockets underneath; unref lets the harness exit while the server lives. */
type Unrefable = { unref?: () => void };

/** Servers alive now: a hard exit of the harness kills them with their trials. */
const live = new Set<WarmServer>();

/** SIGKILLs every warm server and the trials it forked (synchronous; for hard exits). */
export function killWarmServers(): void {
  for (const s of live) s.close();
}

export class WarmServer {
  private readonly waiting = new Map<string, (r: Reply) => void>();
  private readonly exits = new Map<string, (e: { code: number | null; signal: NodeJS.Signals | null }) => void>();
  private readonly children = new Set<number>();
  private readonly stderr = new TailBuffer(4096);
  private gone: string | undefined;

  private constructor(
    private readonly child: ChildProcess,
    readonly pid: number,
  ) {}

  /** Starts the server and waits for its imports and setup(); resolves with the reason it cannot serve. */
  static async start(spec: WarmServerSpec): Promise<WarmServer | { refused: string }> {
    const child = spawn(spec.argv[0]!, spec.argv.slice(1), {
      cwd: spec.cwd,
      env: { ...process.env, ...spec.env, [WARM_SERVER_ENV]: 'fork' },
      // stdin: requests; fd 3: replies; stdout is the script's own.
      stdio: ['pipe', 'ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const stderr = new TailBuffer(4096);
    child.stderr?.on('data', (c: Buffer) => stderr.push(c));
    const replies = child.stdio[3] as Readable | null;
    if (child.pid === undefined || replies === null) {
      const error = await new Promise<Error>((resolve) => child.once('error', resolve));
      return { refused: `could not start ${JSON.stringify(spec.argv[0])}: ${error.message}` };
    }
    const lines = createInterface({ input: replies });
    const first = await new Promise<Reply | { op: 'gone'; why: string }>((resolve) => {
      const timer = setTimeout(
        () => resolve({ op: 'gone', why: `its imports and setup() took over ${spec.readySeconds} s` }),
        spec.readySeconds * 1000,
      );
      lines.once('line', (line) => {
        clearTimeout(timer);
        resolve(parseReply(line) ?? { op: 'gone', why: `it replied ${JSON.stringify(line.slice(0, 200))}` });
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        resolve({
          op: 'gone',
          why:
            `the script exited (${signal ?? `status ${code}`}) without reaching tunebench.main(): ` +
            'warm start needs the Python adapter' +
            tailNote(stderr.text()),
        });
      });
    });
    if (first.op !== 'ready') {
      killGroup(child.pid, 'SIGKILL');
      return {
        refused: first.op === 'gone' ? first.why : first.op === 'refused' ? first.reason : `it replied ${first.op}`,
      };
    }
    const server = new WarmServer(child, first.pid);
    child.stderr?.removeAllListeners('data');
    child.stderr?.on('data', (c: Buffer) => server.stderr.push(c));
    lines.on('line', (line) => server.onReply(line));
    child.once('exit', (code, signal) => server.onGone(`the warm server exited (${signal ?? `status ${code}`})`));
    // The harness must not wait for the server to end.
    child.unref();
    for (const stream of [child.stdin, replies, child.stderr]) (stream as Unrefable | null)?.unref?.();
    live.add(server);
    return server;
  }

  get alive(): boolean {
    return this.gone === undefined;
  }

  /** Forks one trial; throws when the server refuses, is gone, or does not answer. */
  async fork(req: ForkRequest): Promise<ForkedTrial> {
    if (this.gone) throw new WarmForkError(this.gone);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      this.exits.set(req.id, resolve),
    );
    const reply = await new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(req.id);
        reject(new WarmForkError(`the warm server did not answer a fork request within ${FORK_REPLY_SECONDS} s`));
      }, FORK_REPLY_SECONDS * 1000);
      this.waiting.set(req.id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      const message = {
        op: 'fork',
        id: req.id,
        argv: req.argv,
        env: req.env,
        cwd: req.cwd ?? null,
        stderr: req.stderrPath,
        memory_bytes: req.memoryBytes,
        cgroup_procs: req.cgroupProcs,
      };
      this.child.stdin?.write(`${JSON.stringify(message)}\n`);
    });
    if (reply.op !== 'forked') {
      this.exits.delete(req.id);
      throw new WarmForkError(reply.op === 'refused' ? reply.reason : `unexpected reply ${reply.op}`);
    }
    this.children.add(reply.pid);
    return { pid: reply.pid, exited };
  }

  /** Kills the server and every trial it forked that is still running. */
  close(): void {
    for (const pid of this.children) killGroup(pid, 'SIGKILL');
    killGroup(this.pid, 'SIGKILL');
    this.onGone('the warm server was closed');
  }

  private onReply(line: string): void {
    const r = parseReply(line);
    if (r === undefined) return;
    if (r.op === 'exit') {
      this.children.delete(r.pid);
      this.exits.get(r.id)?.({ code: r.code, signal: r.signal === null ? null : signalName(r.signal) });
      this.exits.delete(r.id);
    } else if ((r.op === 'forked' || r.op === 'refused') && r.id !== undefined) {
      this.waiting.get(r.id)?.(r);
      this.waiting.delete(r.id);
    }
  }

  private onGone(why: string): void {
    if (this.gone) return;
    this.gone = why + tailNote(this.stderr.text());
    live.delete(this);
    for (const [id, resolve] of this.waiting) resolve({ op: 'refused', id, reason: this.gone });
    this.waiting.clear();
    // A trial whose server died was killed with it (PR_SET_PDEATHSIG): it ended by SIGKILL.
    for (const resolve of this.exits.values()) resolve({ code: null, signal: 'SIGKILL' });
    this.exits.clear();
  }
}

function parseReply(line: string): Reply | undefined {
  try {
    const r = JSON.parse(line) as Reply;
    return typeof r === 'object' && r !== null && typeof r.op === 'string' ? r : undefined;
  } catch {
    return undefined;
  }
}

function tailNote(stderr: string): string {
  const tail = stderr.trim().split('\n').slice(-3).join(' | ');
  return tail ? `; stderr: ${tail}` : '';
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
    } catch {
      // Gone already.
    }
  }
}

/** The name of a signal number as Node names it (9 -> SIGKILL). */
function signalName(n: number): NodeJS.Signals {
  const entry = Object.entries(osSignals).find(([, v]) => v === n);
  return (entry?.[0] ?? `SIG${n}`) as NodeJS.Signals;
}

const osSignals = constants.signals as Record<string, number>;
