// Warm start: a Python server (the adapter's tunebench/warm.py) that ran the script's imports and
// setup() once and forks one child per trial. This file starts it, asks it for forks and hears of exits.
// Every reply is hostile until its schema and /proc agree: a pid is used only once it is the server's child.
import { spawn, type ChildProcess } from 'node:child_process';
import { constants, tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { processTree, rssBytes } from '../telemetry/proc-tree.js';
import { cgroupHost, canContain } from './cgroup-host.js';
import { NO_SCOPE, selfOwner } from './owner.js';
import { cgroupMemory, createTrialCgroup, killTrialCgroup, removeTrialCgroup, type TrialCgroup } from './cgroup.js';
import { joinArgv, joinedSignal, WRAPPER_ENV, writeEnvFile } from './launch-join.js';
import { identify, signalAll, signalGroup, signalKnown, verifyChild, type KnownProcess } from './pids.js';
import { TailBuffer } from './tail.js';

/** The environment variable that turns the script's `tunebench.main()` into the warm server. */
export const WARM_SERVER_ENV = 'TUNEBENCH_WARM_SERVER';
/** Seconds the server may take to answer a fork request before it counts as broken. */
export const FORK_REPLY_SECONDS = 10;
/** The fd on which the join wrapper says the server joined its cgroup (fd 3 carries the replies). */
const SERVER_JOIN_FD = 4;

export interface WarmServerSpec {
  /** The script's command (the first trial's); the server re-reads nothing of it per trial. */
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string;
  /** Seconds the imports and setup() may take before the server is given up. */
  readySeconds: number;
  /** The run directory's scope (owner.ts) that names the server's cgroup; NO_SCOPE outside a run. */
  scope?: string;
}

export interface ForkRequest {
  id: string;
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string;
  stderrPath: string;
  memoryBytes: number | null;
  /** The cgroup.procs files the child joins before the trial's code runs. */
  cgroupProcs: readonly string[];
}

export interface ForkExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the server died or was ended while the trial ran: a harness fault, not the trial's outcome. */
  serverGone?: string;
}

export interface ForkedTrial {
  pid: number;
  /** The child as verified in /proc (a child of the server, with its start time). */
  root: KnownProcess;
  exited: Promise<ForkExit>;
}

/** The server could not fork a trial (refused, gone, silent or lying); the trial can still run afresh. */
export class WarmForkError extends Error {
  override readonly name = 'WarmForkError';
}

/** A pid in a reply: an integer above 1 (0 and 1 would make a group kill hit everything). */
const pidSchema = z
  .number()
  .int()
  .min(2)
  .max(2 ** 30);
const replySchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('setup'), pid: pidSchema }),
  z.object({ op: z.literal('ready'), pid: pidSchema }),
  z.object({ op: z.literal('refused'), id: z.string().max(200).nullish(), reason: z.string().max(8000) }),
  z.object({ op: z.literal('forked'), id: z.string().max(200), pid: pidSchema }),
  z.object({
    op: z.literal('exit'),
    id: z.string().max(200),
    pid: pidSchema,
    code: z.number().int().min(0).max(255).nullable(),
    signal: z.number().int().min(1).max(64).nullable(),
  }),
]);
type Reply = z.infer<typeof replySchema>;

/** Parses one reply line; undefined when it is not valid JSON of a known shape. */
export function parseReply(line: string): Reply | undefined {
  try {
    const r = replySchema.safeParse(JSON.parse(line));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** Pipes are sockets underneath; unref lets the harness exit while the server lives. */
type Unrefable = { unref?: () => void };

/** Servers alive now: a hard exit of the harness kills them with their trials. */
const live = new Set<WarmServer>();

/** SIGKILLs every warm server and the trials it forked (synchronous; for hard exits). */
export function killWarmServers(): void {
  for (const s of live) s.close();
}

interface Running {
  root: KnownProcess;
  resolve: (e: ForkExit) => void;
}

export class WarmServer {
  private readonly waiting = new Map<string, (r: Reply | { op: 'gone'; why: string }) => void>();
  private readonly running = new Map<string, Running>();
  private readonly stderr = new TailBuffer(4096);
  private gone: string | undefined;

  private constructor(
    private readonly child: ChildProcess,
    private readonly self: KnownProcess,
    private readonly cgroup: TrialCgroup | undefined,
    /** Processes that setup() started (alive at ready): they live as long as the server. */
    private readonly setupHelpers: ReadonlySet<number>,
  ) {}

  get pid(): number {
    return this.self.pid;
  }

  /** Starts the server and waits for its imports and setup(); resolves with the reason it cannot serve. */
  static async start(spec: WarmServerSpec): Promise<WarmServer | { refused: string }> {
    const host = cgroupHost();
    let cgroup: TrialCgroup | undefined;
    try {
      cgroup = canContain(host)
        ? createTrialCgroup(host, selfOwner(spec.scope ?? NO_SCOPE), `warm-${Date.now().toString(36)}`, null)
        : undefined;
    } catch {
      cgroup = undefined; // not contained: its processes are still found as its descendants
    }
    const env = { ...process.env, ...spec.env, [WARM_SERVER_ENV]: 'fork' };
    // In a cgroup the server's environment waits in a private file until its wrapper has joined (launch-join.ts).
    const envDir = cgroup ? mkdtempSync(join(tmpdir(), 'tunebench-warm-')) : undefined;
    const envFile = envDir ? join(envDir, 'env') : undefined;
    if (envFile) writeEnvFile(envFile, env);
    const argv = cgroup && envFile ? joinArgv(cgroup.procsFiles, spec.argv, envFile, SERVER_JOIN_FD) : [...spec.argv];
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: spec.cwd,
      env: cgroup ? WRAPPER_ENV : env,
      // stdin: requests; fd 3: replies; fd 4: the join wrapper's word; stdout is the script's own.
      stdio: ['pipe', 'ignore', 'pipe', 'pipe', cgroup ? 'pipe' : 'ignore'],
      detached: true,
    });
    const joined = cgroup ? joinedSignal(child.stdio[SERVER_JOIN_FD] as Readable | null) : Promise.resolve(true);
    const stderr = new TailBuffer(4096);
    child.stderr?.on('data', (c: Buffer) => stderr.push(c));
    const replies = child.stdio[3] as Readable | null;
    const self = child.pid === undefined ? undefined : identify(child.pid);
    const end = (why: string): { refused: string } => {
      if (self) signalGroup(self, 'SIGKILL');
      if (cgroup) {
        killTrialCgroup(cgroup);
        removeTrialCgroup(cgroup);
      }
      return { refused: why };
    };
    if (child.pid === undefined || replies === null || self === undefined) {
      const error = await new Promise<Error>((resolve) => child.once('error', resolve));
      return end(`could not start ${JSON.stringify(spec.argv[0])}: ${error.message}`);
    }
    const lines = createInterface({ input: replies });
    const first = await firstAnswer(child, lines, stderr, spec.readySeconds);
    // Read by the wrapper before the exec: by the server's first answer it has served.
    if (envDir) rmSync(envDir, { recursive: true, force: true });
    if (first.op !== 'ready') return end(first.why);
    if (first.pid !== self.pid)
      return end(`it announced pid ${first.pid}, but the server is pid ${self.pid} (a forged reply)`);
    if (!(await joined)) return end('it could not join its cgroup');
    const helpers = new Set(processTree(self.pid).filter((p) => p !== self.pid));
    const server = new WarmServer(child, self, cgroup, helpers);
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

  /** Memory the server holds, which every fork shares: its cgroup's charge, else its resident set. */
  memoryBytes(): number | null {
    const charged = this.cgroup ? cgroupMemory(this.cgroup).usageBytes : null;
    if (charged !== null) return charged;
    const rss = rssBytes(this.self.pid);
    return rss > 0 ? rss : null;
  }

  /** Forks one trial; throws when the server refuses, is gone, does not answer, or lies. */
  async fork(req: ForkRequest): Promise<ForkedTrial> {
    if (this.gone) throw new WarmForkError(this.gone);
    if (this.waiting.has(req.id) || this.running.has(req.id))
      throw new WarmForkError(`trial ${req.id} is already running in the warm server`);
    const reply = await new Promise<Reply | { op: 'gone'; why: string }>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(req.id);
        resolve({ op: 'gone', why: `the warm server did not answer a fork request within ${FORK_REPLY_SECONDS} s` });
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
    if (reply.op === 'gone') throw new WarmForkError(reply.why);
    if (reply.op === 'refused') throw new WarmForkError(reply.reason);
    if (reply.op !== 'forked') throw this.fail(`it answered a fork request with ${JSON.stringify(reply.op)}`);
    const root = verifyChild(reply.pid, this.self.pid);
    if (root === undefined)
      throw this.fail(`it named pid ${reply.pid} as trial ${req.id}, which is not a live child of the server`);
    const exited = new Promise<ForkExit>((resolve) => this.running.set(req.id, { root, resolve }));
    // Until this acknowledgement the server does not reap the child: a trial that ends at once is
    // still its (zombie) child when verified above, and its exit is reported only after this.
    this.child.stdin?.write(`${JSON.stringify({ op: 'ack', id: req.id })}\n`);
    return { pid: root.pid, root, exited };
  }

  /**
   * Kills what a finished fork left in the server's tree (descendants re-parented to the server,
   * which is their subreaper): processes that started after the trial did, never setup()'s helpers.
   */
  endStragglers(trial: KnownProcess): void {
    if (this.gone) return;
    const tree = processTree(this.self.pid).filter((p) => p !== this.self.pid && !this.setupHelpers.has(p));
    signalAll(tree, 'SIGKILL', trial.startTicks);
  }

  /** Kills the server, every trial it forked and every process setup() started. */
  close(): void {
    const tree = processTree(this.self.pid);
    for (const r of this.running.values()) {
      signalGroup(r.root, 'SIGKILL');
      signalKnown(r.root, 'SIGKILL');
    }
    signalGroup(this.self, 'SIGKILL');
    signalAll(tree, 'SIGKILL', this.self.startTicks);
    if (this.cgroup) {
      killTrialCgroup(this.cgroup);
      removeTrialCgroup(this.cgroup);
    }
    this.onGone('the warm server was closed');
  }

  /** A forged or malformed message: the server is ended, and nothing it said is used. */
  private fail(why: string): WarmForkError {
    const error = new WarmForkError(`the warm server was ended: ${why}`);
    if (!this.gone) {
      this.close();
      this.gone = error.message;
    }
    return error;
  }

  private onReply(line: string): void {
    if (this.gone) return;
    const r = parseReply(line);
    if (r === undefined) {
      this.fail(`it sent a malformed reply ${JSON.stringify(line.slice(0, 200))}`);
      return;
    }
    if (r.op === 'exit') {
      const run = this.running.get(r.id);
      if (run === undefined || run.root.pid !== r.pid) {
        this.fail(`it reported the exit of pid ${r.pid} as trial ${r.id}, which it did not fork`);
        return;
      }
      this.running.delete(r.id);
      run.resolve({ code: r.code, signal: r.signal === null ? null : signalName(r.signal) });
    } else if ((r.op === 'forked' || r.op === 'refused') && r.id != null && this.waiting.has(r.id)) {
      this.waiting.get(r.id)!(r);
      this.waiting.delete(r.id);
    } else {
      this.fail(`it sent ${JSON.stringify(r.op)} that answers no request`);
    }
  }

  private onGone(why: string): void {
    if (this.gone) return;
    this.gone = why + tailNote(this.stderr.text());
    live.delete(this);
    for (const resolve of this.waiting.values()) resolve({ op: 'gone', why: this.gone });
    this.waiting.clear();
    // A trial whose server died was killed with it (PR_SET_PDEATHSIG): the harness's fault, not the trial's.
    for (const run of this.running.values()) run.resolve({ code: null, signal: 'SIGKILL', serverGone: this.gone });
    this.running.clear();
  }
}

/** The server's first answer: ready, or why it cannot serve (refused, exited, silent, malformed). */
async function firstAnswer(
  child: ChildProcess,
  lines: ReturnType<typeof createInterface>,
  stderr: TailBuffer,
  readySeconds: number,
): Promise<{ op: 'ready'; pid: number } | { op: 'gone'; why: string }> {
  let inSetup = false;
  return new Promise((resolve) => {
    const timer = setTimeout(
      () => resolve({ op: 'gone', why: `its imports and setup() took over ${readySeconds} s` }),
      readySeconds * 1000,
    );
    const done = (answer: { op: 'ready'; pid: number } | { op: 'gone'; why: string }) => {
      clearTimeout(timer);
      lines.removeAllListeners('line');
      resolve(answer);
    };
    lines.on('line', (line) => {
      const r = parseReply(line);
      if (r?.op === 'setup') inSetup = true;
      else if (r?.op === 'ready') done({ op: 'ready', pid: r.pid });
      else if (r?.op === 'refused') done({ op: 'gone', why: r.reason });
      else done({ op: 'gone', why: `it replied ${JSON.stringify(line.slice(0, 200))}, not a valid ready message` });
    });
    child.once('exit', (code, signal) => {
      const status = signal ?? `status ${code}`;
      done({
        op: 'gone',
        why:
          (inSetup
            ? `setup() ended the server (${status}) before it returned: a setup() that calls os._exit or ` +
              'sys.exit cannot serve trials'
            : `the script exited (${status}) without reaching tunebench.main(): warm start needs the Python adapter`) +
          tailNote(stderr.text()),
      });
    });
  });
}

function tailNote(stderr: string): string {
  const tail = stderr.trim().split('\n').slice(-3).join(' | ');
  return tail ? `; stderr: ${tail}` : '';
}

/** The name of a signal number as Node names it (9 -> SIGKILL). */
function signalName(n: number): NodeJS.Signals {
  const entry = Object.entries(osSignals).find(([, v]) => v === n);
  return (entry?.[0] ?? `SIG${n}`) as NodeJS.Signals;
}

const osSignals = constants.signals as Record<string, number>;
