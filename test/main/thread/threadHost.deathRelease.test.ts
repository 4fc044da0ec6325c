/**
 * Issue 11: kill -9 of an agent frees its claims on the pane's death signal, not after its output tail has
 * drained. A window that never acks holds the flooding pane paused, so the tail cannot drain until it lets
 * go: the claim must end (and the secret die) while the exit is still pending.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { nextEvent } from '../../helpers/events.js';
import { hostFixture } from '../../helpers/hosts.js';
import { waitFor } from '../../helpers/pty.js';

const linux = process.platform === 'linux';
const fixture = hostFixture('death');
const openHost = fixture.open;
afterEach(async () => {
  await fixture.cleanup();
});


describe('hard release on death', () => {
  it.runIf(linux)('kill -9 ends the claim before the output tail has drained; the exit follows', async () => {
    const host = await openHost();
    const task = await host.board.run((e) => e.addTask({ title: 'flood' }));
    if (!task.ok) throw new Error(task.error.message);
    const agent = await host.roster.launch('custom', { command: 'exec yes flood' });
    const claim = await host.board.run((e) => e.claim(agent.id, task.value.id));
    expect(claim.ok).toBe(true);
    const session = host.roster.get(agent.id)?.session;
    if (!session) throw new Error('no session');
    host.roster.get(agent.id)?.session.attach('frozen-window'); // never acks: the pane stays paused, its tail held
    await waitFor(() => session.flowStats.paused, 5_000, 'the pane to pause');
    const secret = host.roster.agent(agent.id)?.secret;

    const order: string[] = [];
    session.onExit(() => order.push('exit'));
    host.roster.onExit.event(() => order.push('pane-exit'));
    const ended = nextEvent(host, (e) => e.kind === 'claim-ended' && e.agentId === agent.id, 5_000);
    process.kill(agent.pid as number, 'SIGKILL');
    const e = await ended;
    order.push('claim-ended');

    expect(e).toMatchObject({ reason: 'process-exited', taskId: task.value.id });
    expect(host.board.state.tasks.get(task.value.id)?.state).toBe('open');
    expect(session.exit, 'the exit is still held by the undrained tail').toBeUndefined();
    expect(host.roster.authenticate(secret), 'the secret died with the process').toBeNull();

    host.roster.get(agent.id)?.session.detach('frozen-window'); // the tail drains now
    const exit = await Promise.race([session.exited, new Promise<null>((r) => setTimeout(() => r(null), 5_000))]);
    expect(exit?.signalName).toBe('SIGKILL');
    await waitFor(() => order.includes('pane-exit'), 2_000, 'the pane exit notice');
    expect(order).toEqual(['claim-ended', 'exit', 'pane-exit']);
    expect(host.roster.agents().find((a) => a.id === agent.id)).toMatchObject({ status: 'exited', exit: { signal: 9 }, claims: [] });
  });
});
