import { HOST_ACTOR, type GitRemote } from '../../src-shared/board/model.js';
import { ok } from '../../src-shared/board/result.js';
import { GitRemoteSchema } from '../../src-shared/board/schemas.js';
import { TaskRemote } from './taskRemote.js';
import type { TaskRepo } from './taskRepo.js';

/** The remote a shared board takes from the first clone that opens it, when the board names none. */
export const DEFAULT_REMOTE_NAME = 'origin';

/** This clone's remote is not the board's: its task branches could never meet the other hosts'. */
export class RemoteMismatchError extends Error {
  readonly code = 'remote-mismatch';
  constructor(message: string) {
    super(message);
    this.name = 'RemoteMismatchError';
  }
}

/**
 * A clone joins the board's remote. On a shared board whose settings name no remote yet, this clone's
 * (`origin`) becomes the board's: set in one decision that sees the board's latest settings, so two hosts
 * joining at once cannot both set theirs. Where the board names a remote, this clone must have it at the same
 * URL, or the Thread does not open here: commits recorded here could never reach the other hosts, nor theirs
 * this one. A board on one machine that names no remote is left as it was.
 */
export async function joinRemote(r: TaskRepo): Promise<void> {
  const board = r.board;
  const set = board.state.settings.remote;
  if (!set && !board.sharedName) return;
  const name = set?.name ?? DEFAULT_REMOTE_NAME;
  const mine = await TaskRemote.read(r, name);
  if (!set) {
    // No remote here, or one the board cannot keep (a URL with control characters): the board keeps none
    // until a clone with a usable one opens it, and this host pushes nothing meanwhile.
    if (!mine || !GitRemoteSchema.safeParse(mine).success) return;
    await board.run((e) => (e.state.settings.remote ? ok(null) : e.setSettings({ remote: mine }, HOST_ACTOR)));
    const now = (board.state.settings as { remote: GitRemote | null }).remote;
    if (now && now.url !== mine.url) throw mismatch(r, now, mine.url);
    return;
  }
  if (!mine || mine.url !== set.url) throw mismatch(r, set, mine?.url ?? null);
}

function mismatch(r: TaskRepo, set: { name: string; url: string }, here: string | null): RemoteMismatchError {
  const has = here ? `has the remote '${set.name}' at ${here}` : `has no remote '${set.name}'`;
  const fix = here ? `git remote set-url ${set.name} ${set.url}` : `git remote add ${set.name} ${set.url}`;
  return new RemoteMismatchError(
    `This Thread's board shares its tasks' commits through the remote '${set.name}' at ${set.url}, but ${r.repo.root} ${has}: this host does not join, since its commits could never reach the other hosts (nor theirs this one). Make the clone's remote the board's (${fix}) and open the Thread again, or open another board. Nothing was changed.`,
  );
}
