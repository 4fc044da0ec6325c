import { DECISION_SLACK_MS } from '../../../src-shared/board/eventBounds.js';
import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { applyEvent, emptyBoard, type Board } from '../../../src-shared/board/reducer.js';
import { checkStoredEvent } from '../../../src-shared/board/storedEvents.js';

/** Issue 42: what a stored event must be before a host applies it (the board's rules, not only its shape). */
function board(): Board {
  const b = emptyBoard();
  const events = [
    { kind: 'thread-created', threadId: 't', goal: '', settings: b.settings },
    { kind: 'task-added', taskId: 'T-1', title: 'one', body: '', verify: null, by: 'user' },
    { kind: 'task-added', taskId: 'T-2', title: 'two', body: '', verify: null, by: 'user' },
    { kind: 'grant', taskId: 'T-1', agentId: 'a', token: 1, deadline: 1000 + 120_000, by: 'a' },
  ];
  events.forEach((e, i) => applyEvent(b, { ...e, seq: i + 1, at: 0, mono: 1000 } as BoardEvent));
  return b;
}
const at = (b: Board, e: Record<string, unknown>) => checkStoredEvent({ at: 0, mono: 2000, ...e, seq: b.seq + 1 }, b, b.seq + 1);

describe('checkStoredEvent', () => {
  it('takes what the engine writes', () => {
    const b = board();
    expect(at(b, { kind: 'renew', taskId: 'T-1', agentId: 'a', token: 1, deadline: 2000 + 120_000, via: 'liveness', quietMs: 5 }).ok).toBe(true);
    expect(at(b, { kind: 'grant', taskId: 'T-2', agentId: 'b', token: 2, deadline: 2000 + 12 * 3_600_000, by: 'dispatch' }).ok).toBe(true);
    expect(at(b, { kind: 'note', taskId: 'T-1', by: 'verify', text: 'exit 1\n\u001b[31mred\u001b[0m' }).ok).toBe(true);
    expect(at(b, { kind: 'host-gone', host: { id: 'h-1', name: 'buildbox-3f9c' }, how: 'lost', agents: 2, claims: 1 }).ok).toBe(true);
  });

  it('refuses a host-gone of no known way, a negative count, or a name with controls (issue 45)', () => {
    const b = board();
    const gone = { kind: 'host-gone', host: { id: 'h-1', name: 'buildbox-3f9c' }, how: 'left', agents: 1, claims: 0 };
    expect(at(b, { ...gone, how: 'vanished' }).ok).toBe(false);
    expect(at(b, { ...gone, agents: -1 }).ok).toBe(false);
    expect(at(b, { ...gone, host: { id: 'h-1', name: 'evil\u001b[2J' } }).ok).toBe(false);
  });

  it('refuses a token not above the last, a claim not held, a second creation, a position not its own', () => {
    const b = board();
    expect(at(b, { kind: 'grant', taskId: 'T-2', agentId: 'b', token: 1, deadline: 3000, by: 'b' })).toMatchObject({ ok: false, why: 'its token 1 is not above the last one granted (1)' });
    expect(at(b, { kind: 'grant', taskId: 'T-1', agentId: 'b', token: 2, deadline: 3000, by: 'b' })).toMatchObject({ ok: false, why: 'T-1 is held already (token 1)' });
    expect(at(b, { kind: 'renew', taskId: 'T-1', agentId: 'b', token: 1, deadline: 3000, via: 'write' })).toMatchObject({ ok: false, why: 'T-1 is not held by b under token 1' });
    expect(at(b, { kind: 'claim-ended', taskId: 'T-2', agentId: 'a', token: 1, reason: 'released', to: 'open' })).toMatchObject({ ok: false, why: 'T-2 is not held by a under token 1' });
    expect(at(b, { kind: 'thread-created', threadId: 'x', goal: '', settings: {} })).toMatchObject({ ok: false, why: 'the board was created already' });
    expect(at(b, { kind: 'queue-moved', taskId: 'T-1', order: ['T-1'], by: 'user' })).toMatchObject({ ok: false, why: 'T-1 is not in the merge queue' });
    expect(checkStoredEvent({ kind: 'note', taskId: 'T-1', by: 'user', text: 'x', seq: 9, at: 0, mono: 0 }, b, b.seq + 1)).toMatchObject({ ok: false, why: `it says it is event #9, but it is stored at #${b.seq + 1}` });
    expect(at(b, { kind: 'grant', taskId: 'T-2', agentId: 'b', token: 2, deadline: 2000 + 12 * 3_600_000 + DECISION_SLACK_MS + 1, by: 'b' })).toMatchObject({ ok: false, why: expect.stringMatching(/past the board's longest \(12 h\)/) });
  });

  it("takes a parked folder's saved work and its deletion, and refuses a deletion of work never saved, a bad sha or a grace out of bounds (issue 47)", () => {
    const b = board();
    const saved = { ref: 'refs/forkbench/parked/0a1b2c3d/T-1/1', sha: 'a'.repeat(40), path: '/data/worktrees/0a1b2c3d/a/T-1-1', token: 1, author: 'a', files: 3, at: 0 };
    expect(at(b, { kind: 'worktree-saved', taskId: 'T-1', saved, by: 'forkbench' }).ok).toBe(true);
    expect(at(b, { kind: 'worktree-saved', taskId: 'T-1', saved: { ...saved, sha: 'nope' }, by: 'forkbench' }).ok).toBe(false);
    // A saved work's ref that is not a parked one: a person's Delete would remove that ref (main, here).
    for (const ref of ['refs/heads/main', 'refs/forkbench/parked/../../heads/main', 'refs/forkbench/parked/x y'])
      expect(at(b, { kind: 'worktree-saved', taskId: 'T-1', saved: { ...saved, ref }, by: 'forkbench' })).toMatchObject({ ok: false, why: expect.stringContaining('refs/forkbench/parked/') });
    expect(at(b, { kind: 'saved-work-deleted', taskId: 'T-1', ref: 'refs/heads/main', by: 'user' }).ok).toBe(false);
    expect(at(b, { kind: 'saved-work-deleted', taskId: 'T-1', ref: saved.ref, by: 'user' })).toMatchObject({ ok: false, why: `T-1 has no saved work ${saved.ref}` });
    applyEvent(b, { kind: 'worktree-saved', taskId: 'T-1', saved, by: 'forkbench', seq: b.seq + 1, at: 0, mono: 2000 });
    expect(b.tasks.get('T-1')?.saved).toEqual([saved]);
    expect(at(b, { kind: 'saved-work-deleted', taskId: 'T-1', ref: saved.ref, by: 'user' }).ok).toBe(true);
    expect(at(b, { kind: 'settings-set', settings: { ...b.settings, parkedGraceMs: 10 }, by: 'user' }).ok).toBe(false);
    expect(at(b, { kind: 'settings-set', settings: { ...b.settings, parkedGraceMs: 60_000, parkedBudgetMb: null }, by: 'user' }).ok).toBe(true);
  });

  it('refuses shapes: an unknown kind, a missing field, a wrong type, settings out of bounds', () => {
    const b = board();
    expect(at(b, { kind: 'self-destruct' })).toMatchObject({ ok: false, kind: 'self-destruct', why: '"self-destruct" is not a kind of event this version of Forkbench knows' });
    expect(at(b, { kind: 'note', taskId: 'T-1', by: 'user' })).toMatchObject({ ok: false, kind: 'note' });
    expect(at(b, { kind: 'grant', taskId: 'T-2', agentId: 'b', token: '2', deadline: 3000, by: 'b' })).toMatchObject({ ok: false });
    expect(at(b, { kind: 'settings-set', settings: { leaseMs: 10 * 365 * 24 * 3_600_000 }, by: 'user' })).toMatchObject({ ok: false, why: expect.stringMatching(/lease must be at most/) });
    expect(checkStoredEvent(['not', 'an', 'event'], b, b.seq + 1)).toMatchObject({ ok: false, why: 'it is not an event (not a JSON object)' });
  });
});
