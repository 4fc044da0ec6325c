import type { PtyHostLink } from '../ptyhost/ptyHostLink.js';
import type { GoneAgent } from './paneLocks.js';
import type { AdoptedPane, Panes } from './panes.js';

type Found = Awaited<ReturnType<PtyHostLink['panesOf']>>;

/**
 * The agents a pty host kept for this Thread while no board host ran. The board opens knowing which are
 * alive (they keep their claims, with grace) and which exited meanwhile (they lose theirs now, with the
 * reason, once); then the live ones are taken back as panes. Without a pty host there are none.
 */
export class KeptPanes {
  private readonly live: Found;
  private readonly exited: Found;
  private readonly liveIds: ReadonlySet<string>;
  /** Agents whose process ended while no board host listened. */
  readonly exitedIds: readonly string[];

  private constructor(
    found: Found,
    /** Why a claim's holder that is not among the live ones lost it (BoardServiceOptions.goneReason). With a
     *  pty host the agents do not end with the board host: one that is gone exited, on its own or with a pty
     *  host that died (killed, or the machine restarted), even when nothing was left to list it. */
    readonly goneReason: 'agent-exited' | 'host-restarted',
  ) {
    this.live = found.filter((k) => !k.listing.dead);
    this.exited = found.filter((k) => k.listing.dead);
    this.liveIds = new Set(this.live.map((k) => k.listing.meta.agentId));
    this.exitedIds = this.exited.map((k) => k.listing.meta.agentId);
  }

  static async read(ptyHost: PtyHostLink | undefined, threadKey: string): Promise<KeptPanes> {
    return ptyHost ? new KeptPanes(await ptyHost.panesOf(threadKey), 'agent-exited') : new KeptPanes([], 'host-restarted');
  }

  isLive(agentId: string): boolean {
    return this.liveIds.has(agentId);
  }

  /**
   * The agents that went while no board host ran and worked in a task's folder (`withFolders`): each listed
   * dead with its process group, which may still be finishing a git, and each the pty host no longer lists
   * (it died and swept what was left of its panes at its next start) with none. Their git locks are nobody's.
   */
  goneOf(withFolders: Iterable<string>): GoneAgent[] {
    const gone: GoneAgent[] = this.exited.map((k) => ({ id: k.listing.meta.agentId, name: k.listing.meta.name, pgid: k.listing.pid }));
    const listed = new Set([...this.liveIds, ...this.exitedIds]);
    for (const id of withFolders) if (!listed.has(id)) gone.push({ id, name: id, pgid: null });
    return gone;
  }

  /** Once the board knows the exited ones: their panes are let go, nothing more is read from them. */
  dropExited(): void {
    for (const k of this.exited) k.pty.dispose();
  }

  /** The live ones become this host's panes again; the exited ones' names still count for new names. */
  adoptInto(panes: Panes): void {
    panes.adopt(
      this.live.map((k): AdoptedPane => ({ session: k.pty, ...k.listing.meta, cols: k.listing.cols, rows: k.listing.rows })),
      this.exited.map((k) => k.listing.meta),
    );
  }
}
