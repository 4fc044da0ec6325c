import { describe, expect, it } from 'vitest';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import { compactTask, deserializeBoard, serializeBoard, serializedBoardJson } from '../../../src-shared/board/serialized.js';

function engineWithHistory(): LeaseEngine {
  let t = 1000;
  const e = new LeaseEngine({ now: () => t, wall: () => 1_764_000_000_000 + t });
  e.createThread('th', 'goal');
  for (let i = 0; i < 6; i++) e.addTask({ title: `task ${i}`, body: i % 2 ? 'a body' : '', verify: i === 3 ? 'npm test' : null });
  const c = e.claim('agent-a', 'T-1');
  if (!c.ok) throw new Error('claim');
  e.note('agent-a', 'T-1', 'working', c.value.token);
  e.recordWorktree('T-1', { path: '/data/wt/T-1', branch: 'forkbench/T-1', base: 'main', baseCommit: 'abc' }, 'forkbench');
  e.claim('agent-b', 'T-2');
  t += 200_000; // T-2's lease lapses: lastClaim set, failures counted
  e.sweep();
  e.block('T-4', 'waiting on a decision');
  return e;
}

describe('snapshot encoding', () => {
  it('a board survives compact serialization exactly, and a fresh task carries only its four fields', () => {
    const e = engineWithHistory();
    const s = serializeBoard(e.state);
    expect(deserializeBoard(JSON.parse(JSON.stringify(s)))).toEqual(e.state);
    expect(Object.keys(s.tasks.find((t) => t.id === 'T-5') ?? {}).sort()).toEqual(['createdAt', 'id', 'state', 'title']);
    expect(s.tasks.find((t) => t.id === 'T-1')).toMatchObject({ lastClaim: { agentId: 'agent-a', reason: 'lapsed' }, failures: 1, notes: [{ text: 'working' }], worktree: { branch: 'forkbench/T-1' } });
    expect(JSON.stringify(s).length).toBeLessThan(JSON.stringify([...e.state.tasks.values()]).length);
  });

  it('a snapshot file written with full tasks, before worktrees existed, still loads', () => {
    const e = engineWithHistory();
    const full = { ...serializeBoard(e.state), tasks: [...e.state.tasks.values()].map(({ worktree: _w, ...rest }) => rest) };
    const back = deserializeBoard(JSON.parse(JSON.stringify(full)));
    expect(back.tasks.get('T-5')).toEqual(e.state.tasks.get('T-5'));
    expect(back.tasks.get('T-1')?.worktree).toBeNull();
    expect(compactTask(back.tasks.get('T-4') as never)).toMatchObject({ verify: 'npm test' });
  });

  it('serializing again after every kind of change shows each change: a task compacted before is never served stale', () => {
    const e = engineWithHistory();
    serializeBoard(e.state); // every task now has a compact form kept
    const c = e.claim('agent-c', 'T-3');
    if (!c.ok) throw new Error('claim');
    e.note('agent-c', 'T-3', 'halfway', c.value.token);
    e.editTask('T-5', { title: 'renamed' });
    e.unblock('T-4');
    const again = serializeBoard(e.state);
    expect(deserializeBoard(JSON.parse(JSON.stringify(again)))).toEqual(e.state);
    expect(again.tasks.find((t) => t.id === 'T-3')).toMatchObject({ state: 'claimed', claim: { agentId: 'agent-c' }, notes: [{ text: 'halfway' }] });
    expect(again.tasks.find((t) => t.id === 'T-5')?.title).toBe('renamed');
  });

  it("the board's JSON text, put together from each task's kept text, reads back as the board, before and after changes", () => {
    const e = engineWithHistory();
    const first = serializeBoard(e.state);
    expect(JSON.parse(serializedBoardJson(first))).toEqual(JSON.parse(JSON.stringify(first)));
    e.editTask('T-2', { title: 'renamed' });
    e.addTask({ title: 'one more' });
    const second = serializeBoard(e.state);
    expect(JSON.parse(serializedBoardJson(second))).toEqual(JSON.parse(JSON.stringify(second)));
    expect(deserializeBoard(JSON.parse(serializedBoardJson(second)))).toEqual(e.state);
    const empty = serializeBoard(new LeaseEngine({ now: () => 0, wall: () => 0 }).state);
    expect(JSON.parse(serializedBoardJson(empty))).toEqual(JSON.parse(JSON.stringify(empty)));
  });
});
