import type { Result } from '../../src-shared/board/result.js';
import type { LeaseEngine } from './leaseEngine.js';
import type { BoardService, KeyedOutcome, WriteKey } from './boardService.js';
import { keyedResult } from './storeCore.js';

/**
 * One write to the board, under its idempotency key when it has one: the one spelling of "check the key,
 * replay, run" for every caller (the agents' socket, the window, the host's approvals).
 *
 * Without `prepare`, the store checks the key as it decides (runKeyed): a key seen before answers with its first
 * outcome and nothing is done. With `prepare` (work of the caller's own that must not run twice: reading git, a
 * check outside the engine's rules), the key's first outcome is looked up before it, and a retry of a write
 * already decided is answered that outcome without preparing anything. `answer` makes the engine's value into
 * what the caller is told (and, keyed, what is kept as the key's first outcome).
 */
export async function keyedWrite<T, A>(
  board: Pick<BoardService, 'run' | 'runKeyed' | 'replay'>,
  key: WriteKey | undefined,
  op: (engine: LeaseEngine) => Result<T>,
  answer: (v: T) => A,
  prepare?: () => void | Promise<void>,
): Promise<KeyedOutcome<A>> {
  if (prepare) {
    const prior = await priorOutcome(board, key);
    if (prior) return { replayed: true, result: prior as Result<A> };
    await prepare();
  }
  if (key) return board.runKeyed(key, op, answer);
  return { replayed: false, result: keyedResult(await board.run(op), answer) };
}

/** The first outcome of `key` when a write under it was decided before (undefined: none, or no key): for a
 *  caller whose retry must not redo work of its own before it writes. */
export async function priorOutcome(board: Pick<BoardService, 'replay'>, key: WriteKey | undefined): Promise<Result<unknown> | undefined> {
  return key && (await board.replay(key));
}
