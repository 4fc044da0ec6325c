import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppController, NoticeConstants } from '../../../src-renderer/state/controller.js';
import { agent, engineWith, FakeTransport, settle, snapshotOf } from '../../helpers/renderer.js';

const KEY = '0123456789abcdef';

afterEach(() => vi.useRealTimers());

/** A controller showing one Thread with one running agent, on the global (later: fake) timers. */
async function shown() {
  const host = engineWith(['parse']);
  const t = new FakeTransport();
  let agents = [agent('a1', { name: 'shell 1' })];
  t.on('threads.list', () => [{ key: KEY, open: true, folder: '/p', goal: '' }]);
  t.on('thread.snapshot', () => snapshotOf(host.engine, { agents, log: host.events.slice() }));
  const notices: string[] = [];
  // No permission for system notifications: every notice becomes an in-page toast with its own timer.
  const c = new AppController(t, { systemNotify: (title) => (notices.push(title), false), notifyPermission: () => 'denied' });
  c.start();
  await settle();
  expect(c.state.activeKey).toBe(KEY);
  return { c, t, notices, exitAgent: () => (agents = [agent('a1', { name: 'shell 1', status: 'exited', exit: { code: 1, signal: null } })]) };
}

describe('AppController.dispose', () => {
  it('toastTimerRace: disposed with a toast showing, it leaves no timer behind', async () => {
    const { c } = await shown();
    vi.useFakeTimers();
    c.notices.toast('Claim lapsed: T-1', 'the lease ran out');
    expect(c.state.toasts).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(1);
    c.dispose();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('noticeToastRace: a host notice shown as a toast leaves no timer behind after dispose', async () => {
    const { c, t, notices } = await shown();
    vi.useFakeTimers();
    // Of a Thread not on screen: toasted (one of the Thread on screen stands instead).
    t.push({ type: 'notify', key: 'fedcba9876543210', id: 'exit:shell 1@1', about: 'exit:shell 1', title: 'Agent exited: shell 1', body: 'shell 1 exited with code 1.' });
    const toasts = () => c.state.toasts.map((x) => x.title);
    expect(toasts()).toEqual(['Agent exited: shell 1']);
    expect(notices).toEqual([]);
    expect(vi.getTimerCount()).toBe(1);
    c.dispose();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(NoticeConstants.toastMs);
    expect(toasts()).toEqual(['Agent exited: shell 1']);
  });

  it('after dispose, pushes are not heard and a toast arms no timer', async () => {
    const { c, t } = await shown();
    vi.useFakeTimers();
    c.dispose();
    c.dispose();
    t.push({ type: 'notify', key: KEY, id: 'exit:shell 1@1', about: 'exit:shell 1', title: 'Agent exited: shell 1', body: 'exited with code 1' });
    expect(c.state.toasts).toEqual([]);
    c.notices.toast('late', 'a toast after the window went away');
    expect(vi.getTimerCount()).toBe(0);
  });
});
