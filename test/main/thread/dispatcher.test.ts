import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentState, AgentStateInfo } from '../../../src-shared/agents/agentLife.js';
import { DispatchConstants, DISPATCH_ACTOR } from '../../../src-shared/board/dispatch.js';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { Emitter } from '../../../src-shared/lifecycle/emitter.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { Dispatcher } from '../../../src-main/thread/dispatcher.js';
import { manualTimers } from '../../helpers/manualTimers.js';
import { waitFor } from '../../helpers/pty.js';

/**
 * The Dispatcher, the one owner of dispatch, on a real journal board with its clock and timers in the
 * test's hands: it grants only to an agent idle by its signals (never to one waiting for the person, nor one
 * working), wakes by its own timer when a back-off ends, and once disposed neither listens nor keeps a timer.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const A = 'claude-1-aaaaaaaaaaaa';
const B = 'shell-2-bbbbbbbbbbbb';

async function setup() {
  const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-dispatcher-'));
  dirs.push(dir);
  let mono = 0;
  const board = await JournalBoard.open({ dir, threadId: 'dispatcher', monotonic: () => mono });
  const timers = manualTimers();
  const states = new Map<string, AgentStateInfo>();
  const changes = new Emitter<{ agentId: string; next: AgentStateInfo }>();
  const set = (agentId: string, state: AgentState) => {
    const next: AgentStateInfo = { state, source: 'hook', text: null, since: 0 };
    states.set(agentId, next);
    changes.fire({ agentId, next });
  };
  const events: BoardEvent[] = [];
  board.onEvent((e) => events.push(e));
  const dispatcher = new Dispatcher({
    board,
    agents: () => [A, B],
    stateOf: (id) => states.get(id) ?? null,
    onState: (fn) => changes.event(({ agentId, next }) => fn(agentId, next)),
    timers: timers.timers,
  });
  const grants = () => events.filter((e): e is Extract<BoardEvent, { kind: 'grant' }> => e.kind === 'grant');
  /** Every pass asked for so far has run: the dispatcher's writes are on the board. */
  const settled = async () => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  return { board, timers, set, dispatcher, grants, settled, advance: (ms: number) => (mono += ms), changes };
}

describe('the dispatcher', () => {
  it('grants only to an idle agent that holds nothing: never to one waiting for the person, nor one working', async () => {
    const s = await setup();
    await s.board.run((e) => e.setSettings({ dispatch: true }));
    await s.board.run((e) => e.addTask({ title: 'one' }));
    await s.board.run((e) => e.addTask({ title: 'two' }));
    s.set(A, 'needs-input');
    s.set(B, 'working');
    await s.settled();
    expect(s.grants()).toEqual([]);
    s.set(B, 'idle');
    await waitFor(() => s.grants().length === 1, 5_000, 'the idle agent to be given a task');
    expect(s.grants()[0]).toMatchObject({ taskId: 'T-1', agentId: B, by: DISPATCH_ACTOR });
    // Still idle a moment later (its assignment not yet read), it holds one: nothing more.
    s.set(B, 'idle');
    await s.settled();
    expect(s.grants()).toHaveLength(1);
    // A person's answer ends A's wait; its turn over, it is idle, and is given the other task.
    s.set(A, 'working');
    await s.settled();
    expect(s.grants()).toHaveLength(1);
    s.set(A, 'idle');
    await waitFor(() => s.grants().length === 2, 5_000, 'A to be given T-2');
    expect(s.grants()[1]).toMatchObject({ taskId: 'T-2', agentId: A });
    s.dispatcher.dispose();
    s.changes.dispose();
    await s.board.close();
  });

  it("an agent that gave a task up gets it again only once its back-off ends, woken by the dispatcher's own timer", async () => {
    const s = await setup();
    await s.board.run((e) => e.setSettings({ dispatch: true }));
    await s.board.run((e) => e.addTask({ title: 'hard' }));
    s.set(A, 'needs-input');
    s.set(B, 'idle');
    await waitFor(() => s.grants().length === 1, 5_000, 'B to be given T-1');
    const token = s.grants()[0]!.token;
    expect((await s.board.run((e) => e.release(B, 'T-1', token))).ok).toBe(true);
    await s.settled();
    expect(s.grants()).toHaveLength(1);
    // One timer, at the back-off's end.
    expect(s.timers.delays()).toEqual([DispatchConstants.firstBackoffMs]);
    s.advance(DispatchConstants.firstBackoffMs - 1);
    s.timers.fire();
    await s.settled();
    expect(s.grants()).toHaveLength(1);
    expect(s.timers.delays()).toEqual([1]);
    s.advance(1);
    s.timers.fire();
    await waitFor(() => s.grants().length === 2, 5_000, 'B to be given T-1 again');
    expect(s.grants()[1]).toMatchObject({ taskId: 'T-1', agentId: B });
    // A second give-up keeps it twice as long.
    expect((await s.board.run((e) => e.release(B, 'T-1', s.grants()[1]!.token))).ok).toBe(true);
    await s.settled();
    expect(s.timers.delays()).toEqual([2 * DispatchConstants.firstBackoffMs]);

    s.dispatcher.dispose();
    expect(s.timers.size()).toBe(0);
    s.advance(10 * 60_000);
    s.set(B, 'idle');
    await s.board.run((e) => e.addTask({ title: 'after the end' }));
    await s.settled();
    expect(s.grants()).toHaveLength(2);
    s.changes.dispose();
    await s.board.close();
  });
});
