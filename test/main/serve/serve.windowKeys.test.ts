import { describe, expect, it } from 'vitest';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { waitFor } from '../../helpers/pty.js';
import { servedProjectOfThisFile } from '../../helpers/serveProcess.js';

/**
 * Issue 31, item 4, the window's part: a board write from a window carries an idempotency key, and the host
 * answers a write sent again with its key with the first outcome instead of doing it twice. Real `serve`, its
 * window over the WebSocket as the page's, and a restart in between: the keys are on the board's journal.
 */
const { at, start } = servedProjectOfThisFile('fb-window-keys-');

const titles = async (w: { call: (m: 'thread.snapshot', p: { key: string }) => Promise<{ board: { tasks: Array<{ title: string }> } }> }) =>
  (await w.call('thread.snapshot', { key: at.key })).board.tasks.map((t) => t.title);

describe('a window write sent again with its key', () => {
  it('makes one task and answers the first outcome, refuses the key for another request, and still does after a restart', async () => {
    const first = await start();
    const w = first.window;
    // A body longer than a card's preview: the answer is the window's copy of the task, the same on a retry.
    const add = { key: at.key, title: 'added once', body: 'b'.repeat(1000), writeKey: 'window-key-1' };
    const one = await w.call('task.add', add);
    const again = await w.call('task.add', add);
    expect(again).toEqual(one);
    expect(one.omitted).toEqual({ bodyChars: 1000, notes: 0 });
    expect((await titles(w)).filter((t) => t === 'added once')).toHaveLength(1);

    await expect(w.call('task.add', { ...add, title: 'something else' })).rejects.toThrow(/"code":"key-reused"/);
    expect(await titles(w)).not.toContain('something else');

    // A page without keys still works, as before: each call is a write of its own.
    await w.call('task.add', { key: at.key, title: 'unkeyed' });
    await w.call('task.add', { key: at.key, title: 'unkeyed' });
    expect((await titles(w)).filter((t) => t === 'unkeyed')).toHaveLength(2);

    // The host restarted between a write and its retry (the page's answer lost with it): the key is kept.
    first.proc.kill('SIGINT');
    await first.exit;
    const second = await start();
    expect(await second.window.call('task.add', add)).toEqual(one);
    expect((await titles(second.window)).filter((t) => t === 'added once')).toHaveLength(1);
    second.proc.kill('SIGINT');
    await second.exit;
  }, 120_000);

  it('a drag sent again is the first grant, even once its agent has exited', async () => {
    const s = await start();
    const w = s.window;
    const task = await w.call('task.add', { key: at.key, title: 'dragged once', writeKey: 'window-key-2' });
    const a: AgentInfo = await w.call('agent.launch', { key: at.key, profile: 'shell', cols: 80, rows: 24 });
    const drag = { key: at.key, taskId: task.id, agentId: a.id, writeKey: 'window-key-3' };
    const granted = await w.call('task.assign', drag);
    expect(await w.call('task.assign', drag)).toEqual(granted);
    await w.call('agent.close', { key: at.key, agentId: a.id });
    // Without its key a drag to an agent that has exited is refused; the retry of the first drag is answered.
    await expect(w.call('task.assign', { ...drag, writeKey: undefined })).rejects.toThrow(/no-such-agent/);
    expect(await w.call('task.assign', drag)).toEqual(granted);
    const grants = (await w.call('task.history', { key: at.key, taskId: task.id })).filter((e) => e.kind === 'grant');
    expect(grants).toHaveLength(1);
    s.proc.kill('SIGINT');
    await s.exit;
  }, 120_000);

  it('an approval sent again is answered with its first outcome, where a second approval is refused', async () => {
    const s = await start();
    const w = s.window;
    const task = await w.call('task.add', { key: at.key, title: 'approved once', writeKey: 'window-key-4' });
    const a: AgentInfo = await w.call('agent.launch', { key: at.key, profile: 'shell', cols: 120, rows: 30 });
    await w.call('agent.input', { key: at.key, agentId: a.id, data: `forkbench claim ${task.id} && forkbench done ${task.id}\r` });
    const stateOf = async () => (await w.call('thread.snapshot', { key: at.key })).board.tasks.find((t) => t.id === task.id)?.state;
    await waitFor(async () => (await stateOf()) === 'review', 30_000, 'the agent to submit the task');
    const approve = { key: at.key, taskId: task.id, writeKey: 'window-key-5' };
    expect(await w.call('task.approve', approve)).toBeNull();
    await expect(w.call('task.approve', { ...approve, writeKey: 'window-key-6' })).rejects.toThrow(/bad-state/);
    expect(await w.call('task.approve', approve)).toBeNull();
    const approvals = (await w.call('task.history', { key: at.key, taskId: task.id })).filter((e) => e.kind === 'approved');
    expect(approvals).toHaveLength(1);
    expect(await stateOf()).toBe('done');
    s.proc.kill('SIGINT');
    await s.exit;
  }, 120_000);
});
