/**
 * The window's door into a Thread (src-main/window/threadApi.ts) holds the rules a window's request is held to,
 * which lived in the router before: only an agent whose process runs may be handed a task, and a custom
 * agent needs its command line. A real Thread (board, panes, agents in real ptys) behind it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { InstalledProfiles } from '../../../src-main/window/installedProfiles.js';
import { ThreadApi } from '../../../src-main/window/threadApi.js';
import { hostFixture } from '../../helpers/hosts.js';
import { waitFor } from '../../helpers/pty.js';

const fixture = hostFixture('thread-api');
afterEach(() => fixture.cleanup());

async function openThread() {
  const host = await fixture.open();
  return { host, thread: new ThreadApi(host, new InstalledProfiles(), { kind: 'journal' }) };
}

describe('the window’s door into a Thread', () => {
  it('hands a task only to an agent whose process runs: an exited one and an unknown one are refused, and the task stays open', async () => {
    const { thread } = await openThread();
    const key = thread.key;
    const task = await thread.addTask({ key, title: 'for a running agent' });
    const gone = await thread.launchAgent({ key, profile: 'custom', command: 'exit 0', cols: 80, rows: 24 });
    await waitFor(() => thread.snapshot().agents.find((a) => a.id === gone.id)?.status === 'exited', 20_000, 'the agent to exit');
    // Refused in the decision's turn (after a retried drag's key is looked up), so as a rejection, not a throw.
    await expect(thread.assignTask({ key, taskId: task.id, agentId: gone.id })).rejects.toMatchObject({ code: 'no-such-agent', message: `agent ${gone.id} is not running` });
    await expect(thread.assignTask({ key, taskId: task.id, agentId: 'a-nobody' })).rejects.toMatchObject({ code: 'no-such-agent' });
    expect(thread.snapshot().board.tasks.find((t) => t.id === task.id)?.claim).toBeUndefined();

    const live: AgentInfo = await thread.launchAgent({ key, profile: 'shell', cols: 80, rows: 24 });
    const claim = await thread.assignTask({ key, taskId: task.id, agentId: live.id });
    expect(claim.agentId).toBe(live.id);
    expect(thread.snapshot().board.tasks.find((t) => t.id === task.id)?.claim?.agentId).toBe(live.id);
  }, 60_000);

  it('refuses a custom agent without a command line and starts nothing', async () => {
    const { thread } = await openThread();
    expect(() => thread.launchAgent({ key: thread.key, profile: 'custom', cols: 80, rows: 24 })).toThrow(expect.objectContaining({ code: 'invalid-input', message: 'a custom agent needs a command line' }));
    expect(thread.snapshot().agents).toEqual([]);
    expect(thread.runningAgents()).toBe(0);
  });
});
