/**
 * Issue 33: the board keeps which record reached the Thread's remote (branch-pushed) and names the host of
 * each record on a shared board; a claim that cannot start at the record rewinds it to the last pushed one
 * (record-rewound) and names each lost commit. Snapshots from before read as nothing pushed.
 */
import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { applyEvent, emptyBoard } from '../../../src-shared/board/reducer.js';
import { deserializeBoard, serializeBoard } from '../../../src-shared/board/serialized.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';

const SHA = (c: string) => c.repeat(40);
const HOST = { id: '00000000-0000-4000-8000-00000000000a', name: 'machine-a' };
const move = (from: string, to: string) => ({ ref: 'refs/heads/forkbench/T-1', from: SHA(from), to: SHA(to), tree: SHA(to === '1' ? 'd' : 'c') });

function recorded() {
  const engine = new LeaseEngine(new ManualClock(), emptyBoard(), () => true, HOST);
  engine.createThread('th-1', 'ship it');
  engine.addTask({ title: 'work' });
  const c = engine.claim('agent-a', 'T-1');
  if (!c.ok) throw new Error(c.error.message);
  const token = c.value.token;
  const worktree = { path: '/w/T-1-1', branch: 'forkbench/T-1', token, base: 'main', baseCommit: SHA('0') };
  engine.recordWorktree('T-1', worktree, 'forkbench', { sha: SHA('0'), tree: SHA('e'), token: 0, by: 'forkbench' });
  const events: BoardEvent[] = [];
  engine.onEvent((e) => events.push(e));
  return { engine, token, events };
}

describe('records and the remote', () => {
  it('each record names its host; a push is taken only while the record is still the line it was pushed for', () => {
    const { engine, token, events } = recorded();
    const one = engine.recordBranch('agent-a', 'T-1', token, move('0', '1'));
    expect(one.ok).toBe(true);
    expect(events.find((e) => e.kind === 'branch-recorded')).toMatchObject({ host: HOST });
    const r1 = one.ok ? one.value : null;
    expect(engine.recordPushed('T-1', r1!, SHA('1')).ok).toBe(true);
    expect(engine.task('T-1')?.pushed?.sha).toBe(SHA('1'));
    // Again: nothing new. For a record that is no longer the task's: refused, pushed unchanged.
    expect(engine.recordPushed('T-1', r1!, SHA('1')).ok).toBe(true);
    expect(events.filter((e) => e.kind === 'branch-pushed')).toHaveLength(1);
    engine.recordBranch('agent-a', 'T-1', token, move('1', '2'));
    expect(engine.recordPushed('T-1', { ...r1!, sha: SHA('9') }, SHA('9')).ok).toBe(false);
    expect(engine.task('T-1')?.pushed?.sha).toBe(SHA('1'));
  });

  it('a rewind moves the record back to the pushed one, names the lost commits in a note, and only from the record it saw', () => {
    const { engine, token, events } = recorded();
    const one = engine.recordBranch('agent-a', 'T-1', token, move('0', '1'));
    if (!one.ok) throw new Error('record');
    engine.recordPushed('T-1', one.value, SHA('1'));
    engine.recordBranch('agent-a', 'T-1', token, move('1', '2'));
    const lost = [{ sha: SHA('2'), by: 'agent-a', host: HOST }];
    expect(engine.rewindRecord('T-1', SHA('1'), one.value, lost, 'forkbench', token).ok).toBe(false);
    // For a claim that is no longer the task's (reassigned while its folder waited): refused, the record stays.
    expect(engine.rewindRecord('T-1', SHA('2'), one.value, lost, 'forkbench', token + 1).ok).toBe(false);
    expect(engine.task('T-1')?.record?.sha).toBe(SHA('2'));
    expect(engine.rewindRecord('T-1', SHA('2'), one.value, lost, 'forkbench', token).ok).toBe(true);
    expect(engine.task('T-1')?.record).toEqual(one.value);
    expect(events.find((e) => e.kind === 'record-rewound')).toMatchObject({ from: SHA('2'), to: one.value, lost });
    const note = engine.task('T-1')?.notes.at(-1)?.text ?? '';
    expect(note).toContain(SHA('2').slice(0, 7));
    expect(note).toContain('agent-a');
    expect(note).toContain('machine-a');
    expect(note).toContain(`the last record that reached the remote, ${SHA('1').slice(0, 7)}`);
  });

  it('a board replayed from its events, and a snapshot from before remotes, read the same', () => {
    const { engine } = recorded();
    const back = emptyBoard();
    const all: BoardEvent[] = [];
    const e2 = new LeaseEngine(new ManualClock(), emptyBoard(), () => true, HOST);
    e2.onEvent((e) => all.push(e));
    e2.createThread('th-1', 'g');
    e2.addTask({ title: 'work' });
    for (const e of all) applyEvent(back, e);
    expect(back.tasks.get('T-1')?.pushed).toBeNull();
    const s = serializeBoard(engine.state);
    const old = { ...s, tasks: s.tasks.map(({ pushed: _p, ...t }) => t) };
    expect(deserializeBoard(JSON.parse(JSON.stringify(old))).tasks.get('T-1')?.pushed).toBeNull();
  });
});
