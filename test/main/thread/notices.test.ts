import { afterEach, describe, expect, it, vi } from 'vitest';
import { Limits } from '../../../src-shared/board/limits.js';
import type { WindowPush } from '../../../src-shared/protocol/windowApi.js';
import { managerFixture } from '../../helpers/hosts.js';
import { WindowRouter } from '../../../src-main/window/windowRouter.js';
import type { ThreadSnapshot } from '../../../src-shared/protocol/windowApi.js';

const fixture = managerFixture('notices');
afterEach(() => fixture.cleanup());

async function openThread() {
  const { threads, folder } = fixture.make();
  const pushes: WindowPush[] = [];
  threads.onPush.event((p) => void pushes.push(p));
  const host = await threads.open(folder);
  return { host, pushes, threads };
}

/** A Thread that tells of agents' turns (its notifyAgents setting on), with one agent of a real pane. */
async function withAgent(notifyAgents = true) {
  const t = await openThread();
  await t.host.board.run((e) => e.setSettings({ notifyAgents }));
  await t.host.board.run((e) => e.addTask({ title: 'Deploy the site' }));
  const agent = await t.host.roster.launch('custom', { command: 'exec sleep 600', name: 'worker' });
  const notices = () => t.pushes.filter((p) => p.type === 'notify' || p.type === 'notice-gone').map((p) => (p.type === 'notify' ? `+${p.about}` : `-${p.id.split('@')[0]}`));
  return { ...t, agent, notices };
}

describe('the host’s notices', () => {
  it('a lapse whose task used up its attempts says it went to Needs attention, not back to the backlog', async () => {
    const { host, pushes } = await openThread();
    await host.board.run((e) => e.setSettings({ leaseMs: Limits.minLeaseMs, poisonLimit: 1 }));
    await host.board.run((e) => e.addTask({ title: 'flaky migration' }));
    const agent = await host.roster.launch('custom', { command: 'exec sleep 600', name: 'worker' });
    expect((await host.board.run((e) => e.claim(agent.id, 'T-1'))).ok).toBe(true);
    const notice = await new Promise<WindowPush>((resolve) => {
      const sub = host.board.onEvent(() => {
        const n = pushes.find((p) => p.type === 'notify');
        if (n) {
          sub.dispose();
          resolve(n);
        }
      });
    });
    expect(host.board.state.tasks.get('T-1')?.state).toBe('needs-attention');
    expect(notice).toMatchObject({ type: 'notify', key: host.key, about: 'lapse:T-1', title: 'Claim lapsed: T-1' });
    expect(notice.type === 'notify' && notice.body).toBe(`worker's lease on "flaky migration" ran out; its attempts are used up, so it waits in Needs attention for a person.`);
  });

  it('an agent starting to wait is one notice with an id, kept for a window opened later, claimed by one window, withdrawn when it answers', async () => {
    const { host, agent, pushes, threads, notices } = await withAgent();
    expect((await host.board.run((e) => e.claim(agent.id, 'T-1'))).ok).toBe(true);
    host.states.report(agent.id, 'needs-input', 'Deploy \x1b[2Jnow?');
    const raised = pushes.find((p) => p.type === 'notify');
    expect(raised).toMatchObject({ type: 'notify', key: host.key, about: `waiting:${agent.id}`, agentId: agent.id, title: 'worker is waiting for you', body: 'T-1 "Deploy the site"\nDeploy \\x1b[2Jnow?' });
    const id = raised?.type === 'notify' ? raised.id : '';
    expect(id).toMatch(new RegExp(`^waiting:${agent.id}@\\d+$`));
    // A window opened now is given it with its snapshot.
    const router = new WindowRouter(threads);
    const snap = await router.call('thread.snapshot', { key: host.key }, 'late window');
    expect(snap.ok && (snap.value as ThreadSnapshot).notices.map((n) => n.id)).toEqual([id]);
    // One window among them all raises it: the first to claim it.
    expect(await router.call('notice.claim', { key: host.key, id }, 'window 1')).toEqual({ ok: true, value: true });
    expect(await router.call('notice.claim', { key: host.key, id }, 'window 2')).toEqual({ ok: true, value: false });
    expect(await router.call('notice.claim', { key: host.key, id: 'waiting:nobody@1' }, 'window 2')).toEqual({ ok: true, value: false });
    // Asking the same again is not news; answering it withdraws it, and a gone notice is claimed by none.
    host.states.report(agent.id, 'needs-input', 'Deploy \x1b[2Jnow?');
    host.states.report(agent.id, 'working', null);
    expect(notices()).toEqual([`+waiting:${agent.id}`, `-waiting:${agent.id}`]);
    expect(host.notices.current()).toEqual([]);
    expect(host.notices.claim(id)).toBe(false);
    // A second wait is a new notice, with a new id.
    host.states.report(agent.id, 'needs-input', null);
    const again = host.notices.current()[0];
    expect(again?.about).toBe(`waiting:${agent.id}`);
    expect(again?.id).not.toBe(id);
    expect(host.notices.claim(again!.id)).toBe(true);
  });

  it('a finished turn is a notice; a wait that ends idle, a start-up the host only presumed, and a Thread not opted in are not', async () => {
    const { host, agent, notices } = await withAgent();
    // Launched: the host presumes the CLI working; its first "idle" is a start-up that finished no turn.
    expect(host.states.info(agent.id)?.presumed).toBe(true);
    host.states.report(agent.id, 'idle', null);
    expect(notices()).toEqual([]);
    host.states.report(agent.id, 'working', null);
    host.states.report(agent.id, 'idle', null);
    expect(notices()).toEqual([`+done:${agent.id}`]);
    expect(host.notices.current().map((n) => [n.title, n.body])).toEqual([['worker finished its turn', 'no task claimed']]);
    // Working again: the finished turn is old news. A wait that ends idle (a denied prompt) finished nothing.
    host.states.report(agent.id, 'needs-input', null);
    host.states.report(agent.id, 'idle', null);
    expect(notices()).toEqual([`+done:${agent.id}`, `-done:${agent.id}`, `+waiting:${agent.id}`, `-waiting:${agent.id}`]);

    const off = await withAgent(false);
    off.host.states.report(off.agent.id, 'working', null);
    off.host.states.report(off.agent.id, 'needs-input', null);
    off.host.states.report(off.agent.id, 'idle', null);
    expect(off.notices()).toEqual([]);
  });

  it('an agent that exits: its wait is withdrawn and its exit told; closing its tab withdraws that too', async () => {
    const { host, agent, notices } = await withAgent();
    host.states.report(agent.id, 'needs-input', null);
    process.kill(agent.pid!, 'SIGKILL');
    await vi.waitFor(() => expect(notices()).toContain('+exit:worker'));
    expect(notices()).toEqual([`+waiting:${agent.id}`, `-waiting:${agent.id}`, '+exit:worker']);
    expect(host.notices.current().map((n) => [n.title, n.body])).toEqual([['Agent exited: worker', 'worker was killed by signal 9.']]);
    await host.roster.close(agent.id);
    expect(notices().at(-1)).toBe('-exit:worker');
    expect(host.notices.current()).toEqual([]);
  });
});
