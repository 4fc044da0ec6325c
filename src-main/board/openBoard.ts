import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { BoardService, Holders } from './boardService.js';
import { JournalBoard } from './journalBoard.js';
import { boardNameFor, connectClient, openCheckedPool } from './pg/connection.js';
import { hostIdOf } from './pg/hostIdentity.js';
import { PgBoard } from './pg/pgBoard.js';
import type { HostLeaseTiming } from './pg/hostLease.js';

/** The shortest host lease `--host-lease-ms` takes: renewals come at a third of it (100 ms here), and with
 *  less a renewal's round trip to a busy database is most of the lease, so one slow answer loses the host. */
export const MIN_HOST_LEASE_MS = 300;

/**
 * A host lease of `ms` on a shared board instead of the default (HostLeaseTimes): how long a host may go
 * silent before the others end its agents' claims host-lost — shorter for a team that wants claims back
 * sooner (and chaos runs that kill hosts), longer for hosts on a flaky network. Renewals come at a third of
 * it, as by default. `ms` as given on serve's command line: a whole number, at least MIN_HOST_LEASE_MS.
 */
export function hostLeaseOf(ms: string): HostLeaseTiming {
  const n = Number(ms);
  if (!/^\d+$/.test(ms) || n < MIN_HOST_LEASE_MS) throw new Error(`--host-lease-ms takes a whole number of ms, at least ${MIN_HOST_LEASE_MS}, not '${ms}'`);
  return { lifetimeMs: n, renewMs: Math.floor(n / 3) };
}

/** A Thread's board on PostgreSQL, shared by every host that opens the same name there. */
export interface SharedBoardSetting {
  /** postgres://… (boardUrlSource.ts, or the Thread's setting). Never written to the journal, a log, a page or a child's environment. */
  readonly url: string;
  /** `--board-name`; by default the folder's git remote, else the folder's name. */
  readonly name?: string;
}

export interface ThreadBoardOptions {
  /** The Thread's folder in this host's data folder. */
  dir: string;
  /** The project folder (its git remote names a shared board). */
  folder: string;
  /** The data folder: a shared board knows this host by an id kept there. */
  dataRoot: string;
  /** The Thread id of a new journal board (the folder's key). A new shared board gets one of its own. */
  threadId: string;
  goal: string;
  holders: Holders;
  shared?: SharedBoardSetting;
  /** This host's name on a shared board, as a person chose it; by default the machine's with a tag. */
  hostName?: string;
  /** This host's lease on a shared board (hostLeaseOf); HostLeaseTimes by default. */
  hostLease?: HostLeaseTiming;
  warn?: (message: string) => void;
}

/** The Thread's board: the journal in this host's data folder, or the shared one in PostgreSQL. */
export async function openThreadBoard(o: ThreadBoardOptions): Promise<BoardService> {
  if (!o.shared) return JournalBoard.open({ dir: o.dir, threadId: o.threadId, goal: o.goal, warn: o.warn, holders: o.holders });
  const name = await boardNameFor(o.folder, o.shared.name);
  const pool = await openCheckedPool(o.shared.url);
  const url = o.shared.url;
  try {
    return await PgBoard.open({
      pool,
      ownsPool: true,
      listenClient: () => connectClient(url),
      name,
      dir: o.dir,
      hostId: hostIdOf(o.dataRoot),
      hostName: os.hostname(),
      ...(o.hostName !== undefined ? { hostNameChosen: o.hostName } : {}),
      // Its own id, never the folder's key, which the folder's local board has: the two boards' git names
      // (git/boardNames.ts) and approval seals differ even for a board made again under the same name.
      threadId: randomUUID(),
      goal: o.goal,
      holders: o.holders,
      hostLease: o.hostLease,
      warn: o.warn,
    });
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}
