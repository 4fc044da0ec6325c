import type { Board } from '../../src-shared/board/reducer.js';
import type { AgentLastRun } from '../../src-shared/protocol/windowApi.js';
import type { BoardService } from '../board/boardService.js';
import type { StoredAgent } from './agentStore.js';

/**
 * Which board an agent's held tasks were on (issue 45): task ids are a board's own, and a Thread moved onto
 * another board meets the same ids naming other tasks there. An agent's record keeps the board it held them on;
 * the next run lists an agent of another board as such, with the ids its tasks were copied to here, if any.
 */

/** The board as an agent's record names it: the Thread's local board by its thread id, a shared one by its name. */
export function boardIdentity(board: Pick<BoardService, 'sharedName' | 'state'>): string {
  return board.sharedName === null ? `local:${board.state.threadId}` : `shared:${board.sharedName}`;
}

const LOCAL = 'local:';

/** An ended agent's record as the window lists it, on `board`: its own board's ids, said to be another's when
 *  they are (`elsewhere`), with the ids here of the tasks copied from there (`now`). */
export function lastRunOn(ended: NonNullable<StoredAgent['ended']>, board: Pick<BoardService, 'sharedName' | 'state' | 'engine'>): AgentLastRun {
  const { board: was, ...shown } = ended;
  if (was === undefined || was === boardIdentity(board)) return shown;
  const elsewhere = was.startsWith(LOCAL) ? 'the board on this computer' : `the shared board ${was.slice(was.indexOf(':') + 1)}`;
  // A local board's tasks copied here by this host (boardCarry.ts) say so: `hostId:threadId` and their old id.
  const here = board.engine.here?.id;
  const now = was.startsWith(LOCAL) && here ? copiedIds(board.state, `${here}:${was.slice(LOCAL.length)}`, ended.held) : {};
  return { ...shown, elsewhere, ...(Object.keys(now).length ? { now } : {}) };
}

function copiedIds(b: Readonly<Board>, from: string, held: readonly string[]): Record<string, string> {
  const wanted = new Set(held);
  const out: Record<string, string> = {};
  if (!wanted.size) return out;
  for (const t of b.tasks.values()) if (t.copiedFrom?.board === from && wanted.has(t.copiedFrom.taskId)) out[t.copiedFrom.taskId] = t.id;
  return out;
}
