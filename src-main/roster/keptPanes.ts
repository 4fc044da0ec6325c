import type { HolderFate } from '../board/boardService.js';
import type { PtyHostLink } from '../ptyhost/ptyHostLink.js';
import type { AdoptedPane } from './roster.js';

type Found = Awaited<ReturnType<PtyHostLink['panesOf']>>;

/** An agent gone while no board host ran: whose folders, its name, and its process group (which may still
 *  be finishing a git), or null when none of it can be left (its pty host swept it). */
export interface FoundGone {
  id: string;
  name: string;
  pgid: number | null;
}

/**
 * The agents a pty host kept for this Thread while no board host ran. It answers the board's one question as
 * it opens (is this holder alive, exited, or unknown), and gives the Roster the live ones to take back and the
 * gone ones to end. Without a pty host there are none, and every holder is unknown: it ended with the host.
 */
export class KeptPanes {
  private readonly live: Found;
  private readonly exited: Found;
  private readonly liveIds: ReadonlySet<string>;
  private readonly exitedIds: ReadonlySet<string>;

  private constructor(
    found: Found,
    /** With a pty host, agents do not end with the board host: one it no longer lists exited, on its own or
     *  with a pty host that died (killed, or the machine restarted), even when nothing was left to list it. */
    private readonly hosted: boolean,
  ) {
    this.live = found.filter((k) => !k.listing.dead);
    this.exited = found.filter((k) => k.listing.dead);
    this.liveIds = new Set(this.live.map((k) => k.listing.meta.agentId));
    this.exitedIds = new Set(this.exited.map((k) => k.listing.meta.agentId));
  }

  static async read(ptyHost: PtyHostLink | undefined, threadKey: string): Promise<KeptPanes> {
    return ptyHost ? new KeptPanes(await ptyHost.panesOf(threadKey), true) : new KeptPanes([], false);
  }

  /** The board's question about a claim's holder as it opens. */
  fateOf(agentId: string): HolderFate {
    if (this.liveIds.has(agentId)) return 'alive';
    return this.exitedIds.has(agentId) || this.hosted ? 'exited' : 'unknown';
  }

  /**
   * How a gone agent's process ended, as its pty host saw it happen: its exit status, when, and whether its
   * board host was there to hear of it (and so to record it). Null when the pty host no longer lists it.
   */
  endOf(agentId: string): { exit: { code: number; signal: number | null } | null; at: number | null; watched: boolean } | null {
    const l = this.exited.find((k) => k.listing.meta.agentId === agentId)?.listing;
    if (!l) return null;
    return { exit: l.exit ? { code: l.exit.exitCode, signal: l.exit.signal ?? null } : null, at: l.ended?.at ?? null, watched: l.ended?.watched ?? false };
  }

  isLive(agentId: string): boolean {
    return this.liveIds.has(agentId);
  }

  /** The live ones, to become panes of the board host again. */
  livePanes(): AdoptedPane[] {
    return this.live.map((k): AdoptedPane => ({ session: k.pty, ...k.listing.meta, cols: k.listing.cols, rows: k.listing.rows }));
  }

  /** The exited ones' names, which still count for new names. */
  goneNames(): Array<{ profile: string; name: string }> {
    return this.exited.map((k) => k.listing.meta);
  }

  /**
   * The agents that went while no board host ran and worked in a task's folder (`withFolders`): each listed
   * dead with its process group, which may still be finishing a git, and each the pty host no longer lists
   * (it died and swept what was left of its panes at its next start) with none. Their git locks are nobody's.
   */
  goneOf(withFolders: Iterable<string>): FoundGone[] {
    const gone: FoundGone[] = this.exited.map((k) => ({ id: k.listing.meta.agentId, name: k.listing.meta.name, pgid: k.listing.pid }));
    for (const id of withFolders) if (!this.liveIds.has(id) && !this.exitedIds.has(id)) gone.push({ id, name: id, pgid: null });
    return gone;
  }

  /** Once their deaths are dealt with: the exited panes are let go, nothing more is read from them. */
  dropExited(): void {
    for (const k of this.exited) k.pty.dispose();
  }
}
