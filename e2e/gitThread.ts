import { join } from 'node:path';
import { BoardNames, boardKeyOf } from '../src-main/git/boardNames.js';
import { threadDirOf, threadKeyOf } from '../src-main/thread/threadHost.js';
import { agentWorktreesOf } from '../src-main/sandbox/agentReach.js';
import { gitSync } from '../test/helpers/gitFixture.js';
import type { Served } from './harness.js';
import { windowOn } from './windowClient.js';

/** git in `cwd` as the tests' identity, for reading back what the host did; its output trimmed. */
export const git = (cwd: string, ...args: string[]): string => gitSync(cwd, args);

/** The git names of the served Thread's board (git/boardNames.ts): a journal board, whose Thread id is the
 *  folder's key. */
export const servedNames = (served: Served): BoardNames => {
  const key = threadKeyOf(served.folder);
  return new BoardNames(boardKeyOf({ state: { threadId: key }, sharedName: null }), threadDirOf(join(served.root, 'data'), key));
};

/** The git names of a served Thread's board whatever its store, read from what its window is sent (its Thread
 *  id and, on a shared board, the board's name). */
export async function boardNamesOf(served: Served): Promise<BoardNames> {
  const w = await windowOn(served);
  try {
    const key = threadKeyOf(served.folder);
    const snap = await w.call('thread.snapshot', { key });
    const sharedName = snap.store.kind === 'postgres' ? snap.store.name : null;
    return new BoardNames(boardKeyOf({ state: { threadId: snap.board.threadId }, sharedName }), threadDirOf(join(served.root, 'data'), key));
  } finally {
    w.close();
  }
}

/** The folder that holds `agentId`'s claims' worktrees under the served Thread's data (issue 43: one folder
 *  per agent, `worktrees/<board>/<agent>/`, which that agent's sandbox binds writable). */
export const agentClaimsFolder = (served: Served, agentId: string): string => agentWorktreesOf(servedNames(served).folders, agentId);

/** The worktree of `agentId`'s grant `token` of `taskId`: `worktrees/<board>/<agent>/T-n-<token>`. */
export const claimWorktree = (served: Served, agentId: string, taskId: string, token: number): string => servedNames(served).folderOf(agentId, taskId, token);

/** The worktree a claim of `taskId` by `agentId` printed as its `cd '…'` line in `text` (a pane's text), any
 *  grant: that agent's own claims folder, nowhere else. */
export function printedWorktree(text: string, served: Served, agentId: string, taskId: string, names: BoardNames = servedNames(served)): string | undefined {
  const folder = agentWorktreesOf(names.folders, agentId).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`cd '(${folder}/${taskId}-\\d+)'`).exec(text)?.[1];
}
