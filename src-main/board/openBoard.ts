import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { BoardService, Holders } from './boardService.js';
import { JournalBoard } from './journalBoard.js';
import { boardNameFor, connectClient, openCheckedPool } from './pg/connection.js';
import { hostIdOf } from './pg/hostIdentity.js';
import { PgBoard } from './pg/pgBoard.js';
import type { HostLeaseTiming } from './pg/hostLease.js';

/**
 * A shorter host lease than the default (HostLeaseTimes), in ms: for tests and chaos runs that kill hosts
 * and must not wait 20 s for each. Renewals come at a third of it, as by default.
 */
const HOST_LEASE_ENV = 'FORKBENCH_HOST_LEASE_MS';

function hostLeaseFromEnv(env: NodeJS.ProcessEnv): HostLeaseTiming | undefined {
  const v = env[HOST_LEASE_ENV];
  if (v === undefined || v === '') return undefined;
  const ms = Number(v);
  if (!Number.isInteger(ms) || ms < 300) throw new Error(`${HOST_LEASE_ENV} takes a whole number of ms, at least 300, not '${v}'`);
  return { lifetimeMs: ms, renewMs: Math.floor(ms / 3) };
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
  warn?: (message: string) => void;
}

/** The Thread's board: the journal in this host's data folder, or the shared one in PostgreSQL. */
export async function openThreadBoard(o: ThreadBoardOptions): Promise<BoardService> {
  if (!o.shared) return JournalBoard.open({ dir: o.dir, threadId: o.threadId, goal: o.goal, warn: o.warn, holders: o.holders });
  const hostLease = hostLeaseFromEnv(process.env);
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
      hostLease,
      warn: o.warn,
    });
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}
