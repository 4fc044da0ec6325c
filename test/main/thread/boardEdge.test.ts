import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Limits } from '../../../src-shared/board/limits.js';
import { RpcCode } from '../../../src-shared/protocol/jsonrpc.js';
import { boardEdges, type BoardEdges } from '../../helpers/boardEdges.js';

/**
 * Bad input is refused at the edge, once, with the shared schemas, and changes nothing: the window's edge
 * answers `invalid-input`, the agents' edge JSON-RPC's invalid params. (Moved here from the engine's tests
 * when the engine stopped re-validating what the edges had validated.)
 */
let edges: BoardEdges;
beforeEach(async () => {
  edges = await boardEdges('edge');
  expect(await edges.window('task.add', { title: 'task 1' })).toMatchObject({ ok: true });
});
afterEach(() => edges.dispose());

const invalid = (message?: string) => ({ ok: false, error: { code: 'invalid-input', ...(message ? { message } : {}) } });

describe('the window edge', () => {
  it('empty, multi-line and 1 MB titles are refused with a clear message and change nothing', async () => {
    const seq = edges.board.state.seq;
    expect(await edges.window('task.add', { title: '' })).toMatchObject(invalid('title is empty'));
    expect(await edges.window('task.add', { title: '   ' })).toMatchObject(invalid());
    expect(await edges.window('task.add', { title: 'a\nb' })).toMatchObject(invalid('title must be one line'));
    const big = await edges.window('task.add', { title: 'x'.repeat(1024 * 1024) });
    expect(big).toMatchObject(invalid());
    expect(!big.ok && big.error.message).toMatch(/longer than 500/);
    expect(await edges.window('task.add', { title: 42 })).toMatchObject(invalid());
    expect(edges.board.state.seq).toBe(seq);
    expect(edges.board.state.tasks.size).toBe(1);
  });

  it('a title is trimmed at the edge, so the board stores what the rule checked', async () => {
    const r = await edges.window('task.add', { title: '  padded  ' });
    expect(r).toMatchObject({ ok: true, value: { title: 'padded' } });
  });

  it('lease bounds are enforced', async () => {
    expect(await edges.window('board.setSettings', { patch: { leaseMs: Limits.minLeaseMs - 1 } })).toMatchObject(invalid());
    expect(await edges.window('board.setSettings', { patch: { leaseMs: Limits.maxLeaseMs + 1 } })).toMatchObject(invalid());
    expect(await edges.window('board.setSettings', { patch: { leaseMs: 1.5 } })).toMatchObject(invalid());
    expect(await edges.window('board.setSettings', { patch: { leaseMs: 5000, bogus: 1 } })).toMatchObject(invalid());
    expect(await edges.window('board.setSettings', { patch: { leaseMs: Limits.minLeaseMs } })).toMatchObject({ ok: true });
    expect(edges.board.state.settings.leaseMs).toBe(Limits.minLeaseMs);
  });

  it('an agent id that is not one is refused before the board looks for the agent', async () => {
    expect(await edges.window('task.assign', { taskId: 'T-1', agentId: 'bad agent id!' })).toMatchObject(invalid());
    expect(edges.board.state.tasks.get('T-1')?.state).toBe('open');
  });
});

describe('the agents’ edge', () => {
  const invalidParams = { ok: false, error: { code: RpcCode.invalidParams } };

  it('a garbage token is refused, and the claim it named is untouched', async () => {
    const c = await edges.agent('a', 'claim', { taskId: 'T-1' });
    expect(c).toMatchObject({ ok: true });
    const deadline = edges.board.state.tasks.get('T-1')?.claim?.deadline;
    expect(await edges.agent('a', 'renew', { taskId: 'T-1', token: -3 })).toMatchObject(invalidParams);
    expect(await edges.agent('a', 'renew', { taskId: 'T-1', token: 1.5 })).toMatchObject(invalidParams);
    expect(edges.board.state.tasks.get('T-1')?.claim?.deadline).toBe(deadline);
  });

  it('a 1 MB note is refused and the task keeps no note', async () => {
    const c = await edges.agent('a', 'claim', { taskId: 'T-1' });
    const token = c.ok ? (c.value as { token: number }).token : 0;
    const r = await edges.agent('a', 'note', { taskId: 'T-1', text: 'x'.repeat(1024 * 1024), token });
    expect(r).toMatchObject(invalidParams);
    expect(!r.ok && r.error.message).toMatch(/longer than/);
    expect(edges.board.state.tasks.get('T-1')?.notes).toEqual([]);
  });

  it('a title from an agent follows the same rules as a window’s', async () => {
    expect(await edges.agent('a', 'add', { title: 'a\nb' })).toMatchObject({ ok: false, error: { code: RpcCode.invalidParams, message: 'title must be one line' } });
    expect(await edges.agent('a', 'add', { title: '  spaced  ' })).toMatchObject({ ok: true, value: { title: 'spaced' } });
  });
});
