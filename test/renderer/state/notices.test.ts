import { describe, expect, it } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { DisposableStore } from '../../../src-shared/lifecycle/disposableStore.js';
import { BoardActions } from '../../../src-renderer/state/actions.js';
import { initialState, type AppState } from '../../../src-renderer/state/appState.js';
import { hostCaller } from '../../../src-renderer/state/hostCall.js';
import { NoticeConstants, PageNotices } from '../../../src-renderer/state/notices.js';
import { HostCallError } from '../../../src-renderer/transport/types.js';
import { engineWith, FakeTransport } from '../../helpers/renderer.js';
import { manualTimers } from '../../helpers/manualTimers.js';

const KEY = '0123456789abcdef';

/**
 * Issue 20: error banners stacked and went stale. The real PageNotices behind the real host caller and board
 * actions; the host is a real lease engine whose refusals are the banners' words; timers are the test's.
 */
function setup() {
  const { engine, clock } = engineWith(['parse the config', 'write the tests']);
  const t = new FakeTransport();
  const answer = <T>(r: { ok: true; value: T } | { ok: false; error: { code: string; message: string } }) => {
    if (!r.ok) throw new HostCallError(r.error.code, r.error.message);
    return r.value;
  };
  t.on('task.approve', (p) => answer(engine.approve(p.taskId)));
  t.on('task.release', (p) => answer(engine.userRelease(p.taskId)));
  t.on('task.unblock', (p) => answer(engine.unblock(p.taskId)));
  const store = createStore<AppState>(() => ({ ...initialState(), activeKey: KEY }));
  const timers = manualTimers();
  const disposables = new DisposableStore(timers.timers);
  const notices = new PageNotices(store, disposables, {}, { claim: async () => false, select: () => undefined });
  const actions = new BoardActions(store, hostCaller(t, notices), (id) => id);
  const banners = () => store.getState().errors.map((b) => ({ action: b.action, actions: b.actions, count: b.count, message: b.message }));
  return { engine, clock, t, store, timers, disposables, notices, actions, banners };
}

describe('error banners', () => {
  it('the same refusal again is one banner with a count, not a stack', async () => {
    const { actions, banners } = setup();
    for (let i = 0; i < 7; i++) expect(await actions.approveTask('T-1')).toBe(false);
    expect(banners()).toEqual([{ action: 'approve T-1', actions: ['approve T-1'], count: 7, message: 'T-1 is open; only a task in review can be approved' }]);
    // a different refusal is a banner of its own
    await actions.unblockTask('T-2');
    expect(banners().map((b) => [b.message, b.count])).toEqual([
      ['T-1 is open; only a task in review can be approved', 7],
      ['T-2 is open, not blocked', 1],
    ]);
  });

  it('one message from several actions (a lost connection) is one banner that names them all', async () => {
    const { actions, t, banners, engine } = setup();
    t.setState('host-stopped');
    await actions.approveTask('T-1');
    await actions.releaseTask('T-2');
    await actions.approveTask('T-1');
    expect(banners()).toEqual([{ action: 'approve T-1', actions: ['release T-2', 'approve T-1'], count: 3, message: 'not connected' }]);
    // back: the release goes through and is no longer named; the approve still is, until it too succeeds
    t.setState('connected');
    engine.claim('a1', 'T-2');
    expect(await actions.releaseTask('T-2')).toBe(true);
    expect(banners()).toEqual([{ action: 'approve T-1', actions: ['approve T-1'], count: 3, message: 'not connected' }]);
  });

  it('a banner for a failed action clears when that same action later succeeds, and no other does', async () => {
    const { engine, actions, banners } = setup();
    expect(await actions.approveTask('T-1')).toBe(false);
    expect(await actions.unblockTask('T-2')).toBe(false);
    expect(banners()).toHaveLength(2);
    // the agent finishes T-1: approving it now works, and its old refusal is out of date
    const c = engine.claim('a1', 'T-1');
    if (!c.ok) throw new Error(c.error.message);
    engine.done('a1', 'T-1', c.value.token);
    expect(await actions.approveTask('T-1')).toBe(true);
    expect(banners()).toEqual([{ action: 'unblock T-2', actions: ['unblock T-2'], count: 1, message: 'T-2 is open, not blocked' }]);
    // another action succeeding leaves a banner it is not about
    expect(await actions.releaseTask('T-1')).toBe(false); // done: refused, a banner of its own
    engine.block('T-2', 'waiting');
    expect(await actions.unblockTask('T-2')).toBe(true);
    expect(banners().map((b) => b.action)).toEqual(['release T-1']);
  });

  it('a stale banner expires bannerMs after its refusal last came; a repeat restarts its time', async () => {
    const { actions, timers, banners, disposables } = setup();
    await actions.approveTask('T-1');
    expect(timers.delays()).toEqual([NoticeConstants.bannerMs]);
    // the same refusal again: its one timer is replaced, not added to
    await actions.approveTask('T-1');
    expect(timers.delays()).toEqual([NoticeConstants.bannerMs]);
    expect(banners()[0]?.count).toBe(2);
    timers.fire((ms) => ms === NoticeConstants.bannerMs);
    expect(banners()).toEqual([]);
    expect(timers.size()).toBe(0);
    // dismissing one ends its timer too; nothing is left armed once the window goes
    await actions.unblockTask('T-2');
    await actions.approveTask('T-1');
    expect(timers.size()).toBe(2);
    disposables.dispose();
    expect(timers.size()).toBe(0);
  });

  it('dismissing or succeeding ends a banner and its timer; a sixth kind of refusal drops the oldest', async () => {
    const { notices, timers, banners, store, actions } = setup();
    await actions.approveTask('T-1');
    notices.dismissError(store.getState().errors[0]!.id);
    expect(banners()).toEqual([]);
    expect(timers.size()).toBe(0);
    for (let i = 1; i <= 6; i++) notices.showError(`step ${i}`, new HostCallError('bad-state', `refusal ${i}`));
    expect(banners().map((b) => b.message)).toEqual(['refusal 2', 'refusal 3', 'refusal 4', 'refusal 5', 'refusal 6']);
    // the dropped banner's timer went with it
    expect(timers.size()).toBe(5);
    notices.succeeded('step 4');
    expect(banners().map((b) => b.message)).toEqual(['refusal 2', 'refusal 3', 'refusal 5', 'refusal 6']);
    expect(timers.size()).toBe(4);
  });
});
