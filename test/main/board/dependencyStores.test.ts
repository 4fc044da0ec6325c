import { describe, expect, it } from 'vitest';
import { boardStores } from '../../helpers/boardStores.js';
import type { BoardService } from '../../../src-main/board/boardService.js';
import { waitFor } from '../../helpers/pty.js';

/**
 * Issue 34: what a task waits on is the board's, in both stores. The journal replays it after a restart (and
 * after a snapshot), a PostgreSQL board gives it to a second host, and on each the engine that opens the
 * board rebuilds readiness from it: `claim` with no id still skips the tasks that wait, and a forced claim's
 * note is there too.
 */
const stores = boardStores('deps');

/** T-1 and T-2 wait on T-3; T-4 waits on T-1 and was claimed forced by agent-a. */
async function build(b: BoardService): Promise<void> {
  for (const t of ['one', 'two', 'three']) expect((await b.run((e) => e.addTask({ title: t }))).ok).toBe(true);
  expect((await b.run((e) => e.editTask('T-1', {}, 'user', ['T-3']))).ok).toBe(true);
  expect((await b.run((e) => e.editTask('T-2', {}, 'user', ['T-3']))).ok).toBe(true);
  expect((await b.run((e) => e.addTask({ title: 'four' }, 'agent-a', ['T-1']))).ok).toBe(true);
  expect((await b.run((e) => e.claim('agent-a', 'T-4', true))).ok).toBe(true);
}

/** What a board that opened the store holds of it: the lists, the forced note, and the next ready task. */
async function expectKept(b: BoardService): Promise<void> {
  expect(b.state.tasks.get('T-1')?.after).toEqual(['T-3']);
  expect(b.state.tasks.get('T-2')?.after).toEqual(['T-3']);
  expect(b.state.tasks.get('T-4')?.after).toEqual(['T-1']);
  expect(b.state.tasks.get('T-4')?.notes.map((n) => n.text)).toEqual(['claimed by agent-a before T-1 was done, forced']);
  // The ready index is rebuilt from what was loaded: T-3 is the one ready task, though T-1 comes first.
  const c = await b.run((e) => e.claim('agent-b'));
  expect(c.ok && c.value.taskId).toBe('T-3');
  const again = await b.run((e) => e.claim('agent-b'));
  // (3 on the journal: its restart ended agent-a's claim on T-4, and T-4 waits on T-1; 2 on the shared board)
  expect(again.ok ? again.value.taskId : again.error.message).toMatch(/^no ready task to claim: [23] open tasks wait on others \(T-1 on T-3 \(claimed\)\); forkbench why ID says what each waits on$/);
}

describe('dependencies in the board stores', () => {
  // compactEvery 2: a snapshot every two events, so the board is loaded from a snapshot (compact tasks) too.
  it.each([['its events', undefined], ['a snapshot', 2]] as const)('the journal gives them back after a restart, from %s', async (_from, compactEvery) => {
    await stores.reopened(build, expectKept, compactEvery);
  });

  it('a PostgreSQL board gives them to another host, whose engine gates claims the same', async () => {
    const hostOf = await stores.shared();
    const a = await hostOf('host-a');
    a.hostAgent('agent-a');
    await build(a);
    const b = await hostOf('host-b');
    b.hostAgent('agent-b');
    await waitFor(() => b.state.seq === a.state.seq, 5000, 'B catches up');
    await expectKept(b);
  });
});
