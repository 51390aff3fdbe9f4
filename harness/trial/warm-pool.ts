// The warm servers of a run: one per script (interpreter, script, working directory, environment),
// started on the first trial that asks for it. A server that cannot serve is noted once, and its
// trials run as fresh processes.
import { WarmServer, type WarmServerSpec } from './warm-server.js';

export interface WarmStart {
  /** Identifies the server: trials with the same key fork from the same one. */
  key: string;
  server: Omit<WarmServerSpec, 'readySeconds'>;
}

export class WarmPool {
  private current: { key: string; server: WarmServer } | undefined;
  private readonly refused = new Map<string, string>();

  constructor(
    private readonly readySeconds: number,
    private readonly note: (message: string) => void = () => undefined,
    /** The run directory's scope (owner.ts): the servers' cgroups carry it. */
    private readonly scope?: string,
  ) {}

  /**
   * The server for `warm`, started when needed; undefined (with the reason noted once) when the
   * script cannot be served warm: the trial then runs as a fresh process.
   */
  async server(warm: WarmStart): Promise<{ server: WarmServer } | { fallback: string; first: boolean }> {
    const refused = this.refused.get(warm.key);
    if (refused !== undefined) return { fallback: refused, first: false };
    if (this.current?.key === warm.key && this.current.server.alive) return { server: this.current.server };
    // One server at a time: another script (a compare's second command) replaces it.
    this.current?.server.close();
    this.current = undefined;
    const t0 = Date.now();
    const started = await WarmServer.start({
      ...warm.server,
      readySeconds: this.readySeconds,
      ...(this.scope ? { scope: this.scope } : {}),
    });
    if ('refused' in started) {
      const why = `warm start is off for this script: ${started.refused}; its trials run as fresh processes`;
      this.refused.set(warm.key, why);
      this.note(why);
      return { fallback: why, first: true };
    }
    this.note(
      `warm start: ${warm.server.argv.slice(0, 2).join(' ')} imported and set up once in ` +
        `${((Date.now() - t0) / 1000).toFixed(1)} s (pid ${started.pid}); its trials are forks of it`,
    );
    this.current = { key: warm.key, server: started };
    return { server: started };
  }

  /** Kills the server and its trials. */
  close(): void {
    this.current?.server.close();
    this.current = undefined;
  }
}
