import { describe, expect, it } from 'vitest';
import { boardStores } from '../../helpers/boardStores.js';
import { DispatchConstants } from '../../../src-shared/board/dispatch.js';
import type { BoardService } from '../../../src-main/board/boardService.js';
import { waitFor } from '../../helpers/pty.js';

/**
 * Issue 34: dispatch's state is the board's, in both stores: who may take each task, each agent's own setting
 * and labels over the Thread's default, and the back-off an agent earned by giving a task up. The journal
 * gives them back after a restart (from its events and from a snapshot), a PostgreSQL board gives them to a
 * second host, and the engine that opens the board dispatches by them (the back-off still counts).
 */
const stores = boardStores('dispatch');

const A = 'claude-1-aaaaaaaaaaaa';
const B = 'shell-2-bbbbbbbbbbbb';

/** Dispatch on for the Thread, off for B; A labelled gpu; T-1 for label:gpu, T-2 for anyone. A was given
 *  T-1 and released it (a back-off of 30 s from A). */
async function build(b: BoardService): Promise<void> {
  expect((await b.run((e) => e.setSettings({ dispatch: true }))).ok).toBe(true);
  expect((await b.run((e) => e.setAgentDispatch(A, 'thread', ['gpu']))).ok).toBe(true);
  expect((await b.run((e) => e.setAgentDispatch(B, 'off', []))).ok).toBe(true);
  expect((await b.run((e) => e.addTask({ title: 'train' }, 'user', undefined, ['label:gpu']))).ok).toBe(true);
  expect((await b.run((e) => e.addTask({ title: 'docs' }))).ok).toBe(true);
  const g = await b.run((e) => e.dispatch(A));
  expect(g.ok && g.value.taskId).toBe('T-1');
  if (g.ok) expect((await b.run((e) => e.release(A, 'T-1', g.value.token))).ok).toBe(true);
}

async function expectKept(b: BoardService): Promise<void> {
  expect(b.state.settings.dispatch).toBe(true);
  expect(b.state.settings.agentDispatch).toEqual({ [A]: { mode: 'thread', labels: ['gpu'] }, [B]: { mode: 'off', labels: [] } });
  expect(b.state.tasks.get('T-1')?.for).toEqual(['label:gpu']);
  expect(b.state.tasks.get('T-1')?.backoff?.[A]?.tries).toBe(1);
  // A is kept from T-1 (backing off) and takes T-2; B, off, is given nothing.
  expect((await b.run((e) => e.dispatch(B))).ok).toBe(false);
  const g = await b.run((e) => e.dispatch(A));
  expect(g.ok ? g.value.taskId : g.error.message).toBe('T-2');
  const pick = b.engine.dispatchPick('claude-3-cccccccccccc');
  expect(pick.taskId).toBeNull();
  expect(b.engine.dispatchPick(A).taskId).toBeNull();
  const until = b.state.tasks.get('T-1')?.backoff?.[A]?.until ?? 0;
  expect(until - b.clock.now()).toBeLessThanOrEqual(DispatchConstants.firstBackoffMs);
}

describe('dispatch in the board stores', () => {
  it.each([['its events', undefined], ['a snapshot', 2]] as const)('the journal gives it back after a restart, from %s', async (_from, compactEvery) => {
    await stores.reopened(build, expectKept, compactEvery);
  });

  it('a PostgreSQL board gives it to another host, whose engine dispatches by it', async () => {
    const hostOf = await stores.shared();
    const a = await hostOf('host-a');
    a.hostAgent(A);
    a.hostAgent(B);
    await build(a);
    const b = await hostOf('host-b');
    await waitFor(() => b.state.seq === a.state.seq, 5000, 'B catches up');
    await expectKept(b);

    // Two hosts' agents idle at the same moment, one ready task: the board's one order grants it once.
    const C = 'codex-4-dddddddddddd';
    const D = 'codex-5-eeeeeeeeeeee';
    a.hostAgent(C);
    b.hostAgent(D);
    await waitFor(() => a.state.seq === b.state.seq, 5000, 'A catches up');
    expect((await a.run((e) => e.addTask({ title: 'one for codex' }, 'user', undefined, ['codex']))).ok).toBe(true);
    await waitFor(() => b.state.tasks.has('T-3'), 5000, 'B sees T-3');
    const [ra, rb] = await Promise.all([a.run((e) => e.dispatch(C)), b.run((e) => e.dispatch(D))]);
    expect([ra.ok, rb.ok].filter(Boolean)).toHaveLength(1);
    await waitFor(() => a.state.seq === b.state.seq, 5000, 'both hold the one board');
    const grants = (await a.log()).filter((e) => e.kind === 'grant' && e.taskId === 'T-3');
    expect(grants).toHaveLength(1);
    expect(a.state.tasks.get('T-3')?.claim?.agentId).toBe(ra.ok ? C : D);
  });
});
