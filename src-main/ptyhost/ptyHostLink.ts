import type { PaneIdentity, PaneSession, PtyFactory } from '../pty/paneSession.js';
import type { PtySpawnOptions } from '../pty/paneSession.js';
import type { PtyHostClient } from './ptyHostClient.js';
import { connectPtyHost, type PtyHostLaunchOptions } from './ptyHostLauncher.js';
import type { PaneListing } from './protocol.js';
import type { RemotePty } from './remotePty.js';

/** The board host's pty host is always this Forkbench's version, started with the board host's env. */
type LinkOptions = Pick<PtyHostLaunchOptions, 'idleMs' | 'warn' | 'replaceOther' | 'client'>;

/**
 * A board host's way to its data folder's pty host. A pty host that died (killed -9; its panes already
 * ended as lost) is replaced by a new one at the next launch, so the board host carries on.
 */
export class PtyHostLink implements PtyFactory {
  private constructor(
    private client: PtyHostClient,
    private readonly dataRoot: string,
    private readonly o: LinkOptions,
    /** Whether this board host started the pty host (no agents were kept for it). */
    readonly started: boolean,
  ) {
    this.watch();
  }

  /** With `replaceOther`, a pty host of another Forkbench version is stopped with its agents first (the
   *  person chose to: `serve --replace-pty-host`, the app's "Stop it and its agents"); without, it is refused. */
  static async open(dataRoot: string, o: LinkOptions = {}): Promise<PtyHostLink> {
    const { client, started } = await connectPtyHost(dataRoot, o);
    return new PtyHostLink(client, dataRoot, o, started);
  }

  get hostPid(): number {
    return this.client.hostPid;
  }

  private watch(): void {
    const c = this.client;
    c.onProblem.event((m) => this.o.warn?.(m));
    c.onClose.event(({ lost }) => {
      if (lost) this.o.warn?.(`forkbench: the pty host (pid ${c.hostPid}) is gone; its agents ended with it. A new one starts with the next agent`);
    });
  }

  async spawn(command: string, args: readonly string[], options: PtySpawnOptions, who: PaneIdentity): Promise<PaneSession> {
    if (this.client.isClosed) {
      this.client = (await connectPtyHost(this.dataRoot, { idleMs: this.o.idleMs, client: this.o.client })).client;
      this.watch();
    }
    return this.client.spawn(command, args, options, who);
  }

  /** The panes the pty host holds for one Thread, each already a RemotePty, said on the log (some may be
   *  agents whose launch no board host saw finish: serve killed with the spawn in flight). A pty host that
   *  dies while asked holds none: its agents went with it. */
  async panesOf(threadKey: string): Promise<Array<{ listing: PaneListing; pty: RemotePty }>> {
    if (this.client.isClosed) return [];
    const client = this.client;
    const all = await client.list().catch((err: Error) => {
      if (client.isClosed) return [];
      throw err;
    });
    const found = all.filter((f) => f.listing.meta.threadKey === threadKey);
    const live = found.filter((f) => !f.listing.dead).map((f) => `${f.listing.meta.name} (pid ${f.listing.pid})`);
    // A dead pane says when it ended and whether a board host heard of it then (the pty host noted both as it
    // happened): one that ended while its host ran is not said to have gone while none did (issue 45).
    const gone = (watched: boolean) => found.filter((f) => f.listing.dead && (f.listing.ended?.watched ?? false) === watched).map((f) => endedText(f.listing));
    const [heard, unheard] = [gone(true), gone(false)];
    if (live.length) this.o.warn?.(`forkbench: taking back ${live.length} agent(s) the pty host kept: ${live.join(', ')}`);
    if (heard.length) this.o.warn?.(`forkbench: ${heard.length} agent(s) ended while their board host ran: ${heard.join(', ')}`);
    if (unheard.length) this.o.warn?.(`forkbench: ${unheard.length} agent(s) ended while no board host ran: ${unheard.join(', ')}`);
    return found;
  }

  /** The board host stops with its agents: the pty host ends them all and exits. */
  shutdown(): Promise<void> {
    return this.client.shutdown();
  }

  /**
   * The board host stopped its own agents (its Threads are closed): the pty host goes too, unless it still
   * runs agents of Threads this board host did not open, kept there by an earlier run to come back to; those
   * are not this quit's to end, so it is left serving them. Returns how many it kept.
   */
  async stopUnlessKept(): Promise<number> {
    if (this.client.isClosed) return 0;
    // Only counted: a listing, not the panes' RemotePty objects (each reads /proc) that `list` would make.
    const others = (await this.client.request('list', {}).catch(() => [])).filter((l) => !l.dead).length;
    if (others > 0) this.leave();
    else await this.shutdown();
    return others;
  }

  /** The board host quits after closing its Threads: with `keepAgents` it leaves them running here, else it
   *  stops them (stopUnlessKept). Returns how many agents of other Threads the pty host still runs. */
  async quit(keepAgents: boolean): Promise<number> {
    if (!keepAgents) return this.stopUnlessKept();
    this.leave();
    return 0;
  }

  /** The board host goes and leaves its agents running in the pty host. */
  leave(): void {
    this.client.leave();
  }
}

/** `shell 2 (pid 123), killed by SIGKILL at 2026-12-07T17:52:03.120Z`: a dead pane, as the pty host saw it end. */
function endedText(l: PaneListing): string {
  const how = l.exit ? (l.exit.signal ? `killed by ${l.exit.signalName ?? `signal ${l.exit.signal}`}` : `exited with code ${l.exit.exitCode}`) : 'ended';
  return `${l.meta.name} (pid ${l.pid}), ${how}${l.ended ? ` at ${new Date(l.ended.at).toISOString()}` : ''}`;
}
