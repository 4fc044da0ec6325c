import { describe, expect, it } from 'vitest';
import { boardStores } from '../../helpers/boardStores.js';
import type { BoardService } from '../../../src-main/board/boardService.js';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import type { UsageTurn } from '../../../src-shared/usage/usage.js';
import { waitFor } from '../../helpers/pty.js';

/**
 * Issue 47: what attribution needs is the board's, in both stores. After a restart (the journal reopened from
 * its events or from a snapshot) and on another host of a PostgreSQL board, the turns already recorded are
 * not counted again, and a turn read late is still put on the claim its agent held when it was spent, though
 * that claim has ended since.
 */
const stores = boardStores('usage');

const A = 'claude-1-aaaaaaaaaaaa';
const B = 'codex-2-bbbbbbbbbbbb';

function turn(n: number, cliAt: number): UsageTurn {
  return { id: `msg-${n}`, cliAt, model: 'fake', tokens: { input: n * 100 + 1, output: n * 10 + 2, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, usd: null };
}

/** When each step happened (wall ms), kept between build and expectKept of one test run. */
let marks: { granted: number; spent: number; reassigned: number } = { granted: 0, spent: 0, reassigned: 0 };

/** A holds T-1, spends two turns (recorded), T-1 goes to B; A's third turn, spent before the reassign, is not
 *  read yet when the host stops. */
async function build(b: BoardService): Promise<void> {
  expect((await b.run((e) => e.addTask({ title: 'parser' }))).ok).toBe(true);
  const c = await b.run((e) => e.claim(A, 'T-1'));
  expect(c.ok).toBe(true);
  marks.granted = (await b.log()).find((e) => e.kind === 'grant')?.at ?? NaN;
  marks.spent = marks.granted;
  const r = await b.run((e) => e.recordUsage(A, 'claude', [turn(1, marks.spent), turn(2, marks.spent)]));
  expect(r.ok && r.value.recorded).toBe(2);
  // Wall time moves on before the reassign, so "spent before it" is a strict instant.
  const t = Date.now();
  await waitFor(() => b.clock.wall() > t + 5, 2000, 'the wall clock moves');
  expect((await b.run((e) => e.assign('T-1', B))).ok).toBe(true);
  marks.reassigned = (await b.log()).find((e) => e.kind === 'reassign')?.at ?? NaN;
}

async function usageOf(b: BoardService): Promise<Array<Extract<BoardEvent, { kind: 'usage' }>>> {
  return (await b.log()).filter((e): e is Extract<BoardEvent, { kind: 'usage' }> => e.kind === 'usage');
}

async function expectKept(b: BoardService): Promise<void> {
  // The reader starts over after the restart: turns 1 and 2 again, and turn 3, spent under A's claim.
  const r = await b.run((e) => e.recordUsage(A, 'claude', [turn(1, marks.spent), turn(2, marks.spent), turn(3, marks.reassigned - 1)]));
  expect(r.ok ? r.value : r.error).toMatchObject({ recorded: 1, skipped: 2, to: [{ taskId: 'T-1', token: 1, how: 'held' }] });
  const ev = await usageOf(b);
  const ids = ev.flatMap((e) => e.turns.map((t) => t.id));
  expect(ids.filter((id) => id === 'msg-1')).toHaveLength(1);
  expect(ids).toContain('msg-3');
  // A turn of A after the reassign is its own overhead: it holds nothing now.
  const after = await b.run((e) => e.recordUsage(A, 'claude', [turn(4, b.clock.wall())]));
  expect(after.ok && after.value.to).toEqual([{ taskId: null, token: null, how: 'overhead', turns: 1 }]);
  // B's turns from the reassign go to T-1 under B's token.
  const bs = await b.run((e) => e.recordUsage(B, 'codex', [turn(5, marks.reassigned)]));
  expect(bs.ok && bs.value.to).toEqual([{ taskId: 'T-1', token: 2, how: 'held', turns: 1 }]);
}

describe('usage attribution in the board stores', () => {
  it.each([['its events', undefined], ['a snapshot', 2]] as const)('the journal keeps what was recorded and who held what when, after a restart, from %s', async (_from, compactEvery) => {
    marks = { granted: 0, spent: 0, reassigned: 0 };
    await stores.reopened(build, expectKept, compactEvery);
  });

  it('a PostgreSQL board gives it to another host, which counts nothing twice', async () => {
    marks = { granted: 0, spent: 0, reassigned: 0 };
    const hostOf = await stores.shared();
    const a = await hostOf('host-a');
    a.hostAgent(A);
    a.hostAgent(B);
    await build(a);
    const b = await hostOf('host-b');
    await waitFor(() => b.state.seq === a.state.seq, 5000, 'B catches up');
    await expectKept(b);
    await waitFor(() => a.state.seq === b.state.seq, 5000, 'A catches up');
    expect(a.state.usageLedger).toEqual(b.state.usageLedger);
  });
});
