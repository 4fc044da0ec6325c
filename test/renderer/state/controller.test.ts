import { FlowLimits } from '../../../src-shared/terminal/flowLimits.js';
import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { Limits } from '../../../src-shared/board/limits.js';
import { WRITE_KEY_PATTERN } from '../../../src-shared/protocol/agentMethods.js';
import type { OtherBoardFolder, ThreadSnapshot, WorktreeInfo } from '../../../src-shared/protocol/windowApi.js';
import { AppController } from '../../../src-renderer/state/controller.js';
import type { PaneHost } from '../../../src-renderer/terminal/paneHost.js';
import { agentExitedNotice, lapseNotice, turnNotice } from '../../../src-shared/notices/notices.js';
import { HostClock } from '../../../src-renderer/state/hostClock.js';
import { HostCallError } from '../../../src-renderer/transport/types.js';
import { agent, engineWith, FakeTransport, settle, snapshotOf } from '../../helpers/renderer.js';

const KEY = '0123456789abcdef';

class FakePanes implements PaneHost {
  key: string | null = null;
  ids: string[] = [];
  restores: Array<{ ids: string[]; all: boolean }> = [];
  data: PaneHost['data'] = (agentId, data) => {
    if (!this.ids.includes(agentId)) return false;
    this.written.push(`${agentId}:${data}`);
    return true;
  };
  written: string[] = [];
  setThread(key: string | null) {
    if (key !== this.key) this.ids = [];
    this.key = key;
  }
  sync(ids: readonly string[], all: boolean) {
    this.ids = [...ids];
    this.restores.push({ ids: [...ids], all });
  }
  preferredSize() {
    return { cols: 120, rows: 40 };
  }
}

function setup(o: { threads?: Array<{ key: string; open: boolean }>; tasks?: string[] } = {}) {
  const host = engineWith(o.tasks ?? ['parse', 'test']);
  const t = new FakeTransport();
  let agents = [agent('a1', { name: 'shell 1' }), agent('a2', { name: 'shell 2' })];
  t.on('threads.list', () => (o.threads ?? [{ key: KEY, open: true }]).map((x) => ({ ...x, folder: '/p', goal: '' })));
  t.on('thread.snapshot', () => snapshotOf(host.engine, { agents, log: host.events.slice() }));
  const panes = new FakePanes();
  const notices: string[] = [];
  const timers: Array<() => void> = [];
  let local = 0;
  const c = new AppController(t, {
    panes,
    clock: new HostClock(() => local),
    systemNotify: (title) => (notices.push(title), true),
    notifyPermission: () => 'granted',
    setTimeout: (f) => timers.push(f),
    clearTimeout: () => undefined,
  });
  /** Push every event the engine emitted since the last call, as the host does. */
  let sent = host.events.length;
  const pushEvents = () => {
    for (const e of host.events.slice(sent)) t.push({ type: 'board-event', key: KEY, event: e });
    sent = host.events.length;
  };
  const skipEvents = () => (sent = host.events.length);
  return {
    host,
    t,
    c,
    panes,
    notices,
    timers,
    pushEvents,
    skipEvents,
    setAgents: (a: typeof agents) => (agents = a),
    setLocal: (ms: number) => (local = ms),
  };
}

describe('AppController', () => {
  it('opens the only open Thread by itself and draws its board and agents', async () => {
    const { c, panes } = setup();
    c.start();
    await settle();
    const s = c.state;
    expect(s.activeKey).toBe(KEY);
    expect(s.goal).toBe('ship it');
    expect(s.columns.open).toEqual(['T-1', 'T-2']);
    expect(s.agentIds).toEqual(['a1', 'a2']);
    expect(s.activeAgentId).toBe('a1');
    expect(s.log.map((l) => l.kind)).toEqual(['thread-created', 'task-added', 'task-added']);
    expect(panes.restores).toEqual([{ ids: ['a1', 'a2'], all: false }]);
  });

  it("names an agent that has left the host's list (closed, relaunched, of an earlier run) from its id in the log", async () => {
    const { c, host } = setup();
    // The engine journals claims by id; this one's agent is in no agent list the page ever had.
    host.engine.claim('shell-7-0123456789ab', 'T-1');
    c.start();
    await settle();
    expect(c.state.log.at(-1)?.summary).toBe('T-1 claimed by shell 7 (token 1)');
  });

  it('does not choose for the person when several Threads are open', async () => {
    const { c } = setup({ threads: [{ key: KEY, open: true }, { key: 'fedcba9876543210', open: true }] });
    c.start();
    await settle();
    expect(c.state.activeKey).toBeNull();
    expect(c.state.threads).toHaveLength(2);
  });

  it('applies live events and counts a claim down from its deadline on the host clock', async () => {
    const { c, host, pushEvents, setLocal } = setup();
    setLocal(50_000); // the window's clock is unrelated to the host's
    c.start();
    await settle();
    host.clock.advance(3_000);
    host.engine.claim('a1', 'T-1');
    setLocal(53_000);
    pushEvents();
    expect(c.state.columns.claimed).toEqual(['T-1']);
    const deadline = c.state.board!.tasks.get('T-1')!.claim!.deadline;
    expect(c.clock.remaining(deadline)).toBe(Limits.defaultLeaseMs);
    setLocal(53_000 + 30_000);
    expect(c.clock.remaining(deadline)).toBe(Limits.defaultLeaseMs - 30_000);
    expect(c.state.log.at(-1)!.kind).toBe('grant');
  });

  it('buffers events that arrive while the snapshot is on its way, and drops the ones it already has', async () => {
    const { c, host, t, pushEvents, skipEvents } = setup();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const snap = t.handlers['thread.snapshot']!;
    t.on('thread.snapshot', async (p) => {
      await gate;
      return snap(p);
    });
    skipEvents();
    c.start();
    await settle();
    host.engine.claim('a1', 'T-1'); // in the snapshot AND pushed
    pushEvents();
    release();
    await settle();
    host.engine.claim('a2', 'T-2'); // after: live
    pushEvents();
    expect(c.state.columns.claimed).toEqual(['T-1', 'T-2']);
    expect(c.state.log.filter((l) => l.kind === 'grant')).toHaveLength(2);
  });

  it('fetches the snapshot again when a push was lost', async () => {
    const { c, host, t, pushEvents, skipEvents } = setup();
    c.start();
    await settle();
    host.engine.claim('a1', 'T-1');
    skipEvents(); // lost
    host.engine.claim('a2', 'T-2');
    pushEvents();
    await settle();
    expect(t.callsOf('thread.snapshot')).toHaveLength(2);
    expect(c.state.columns.claimed).toEqual(['T-1', 'T-2']);
  });

  it('marks a lapsed claim; the notice is the host’s push, shown once, and the board event alone raises none', async () => {
    const { c, host, pushEvents, notices, timers, t } = setup();
    c.start();
    await settle();
    host.engine.claim('a1', 'T-1');
    host.clock.advance(Limits.defaultLeaseMs);
    host.engine.sweep();
    pushEvents();
    expect(c.state.columns.open).toContain('T-1');
    for (const f of timers.splice(0)) f();
    // The page builds no notice of its own (the host is their one source).
    expect(notices).toEqual([]);
    const lapse = lapseNotice('T-1', 'shell 1', 'parse', 'open');
    // The host gives the claim on a notice once (threadNotices.ts); the same notice twice is raised once.
    const claimed = new Set<string>();
    t.on('notice.claim', (p) => !claimed.has(p.id) && !!claimed.add(p.id));
    t.push({ type: 'notify', key: KEY, ...lapse });
    t.push({ type: 'notify', key: KEY, ...lapse });
    await settle();
    for (const f of timers.splice(0)) f();
    expect(notices).toEqual(['Claim lapsed: T-1']);
  });

  it('the host’s notices: those of its snapshot stand and are raised if unclaimed, pushes add and withdraw them, none for the tab being looked at', async () => {
    const host = engineWith(['parse']);
    const t = new FakeTransport();
    const waiting = turnNotice('waiting', { id: 'a2', name: 'shell 2', text: 'Deploy?' }, null, 5);
    t.on('threads.list', () => [{ key: KEY, open: true, folder: '/p', goal: '' }]);
    t.on('thread.snapshot', () => snapshotOf(host.engine, { agents: [agent('a1'), agent('a2')], notices: [waiting] }));
    const claimed = new Set<string>();
    t.on('notice.claim', (p) => !claimed.has(p.id) && !!claimed.add(p.id));
    const raised: Array<{ title: string; tag: string; click: () => void }> = [];
    const closed: string[] = [];
    const c = new AppController(t, {
      notifyPermission: () => 'granted',
      systemNotify: (title, _body, tag, click) => (raised.push({ title, tag, click }), true),
      closeSystemNotify: (tag) => void closed.push(tag),
      looking: () => true,
    });
    c.start();
    await settle();
    // Opened after shell 2 began waiting: the notice stands, and no window had raised it, so this one does.
    expect(c.state.hostNotices.map((n) => n.id)).toEqual([waiting.id]);
    expect(raised.map((r) => [r.title, r.tag])).toEqual([['shell 2 is waiting for you', waiting.id]]);
    raised[0]!.click();
    expect(c.state.activeAgentId).toBe('a2');
    // Reconnected: a notice this window already has is not raised again, nor claimed.
    t.setState('connecting');
    t.setState('connected');
    await settle();
    expect(raised).toHaveLength(1);
    // The person looks at shell 2's tab: its next notice stands but raises nothing and claims nothing.
    const again = turnNotice('done', { id: 'a2', name: 'shell 2', text: null }, null, 9);
    t.push({ type: 'notify', key: KEY, ...again });
    await settle();
    expect(raised).toHaveLength(1);
    expect(t.callsOf('notice.claim').map((p) => p.id)).toEqual([waiting.id]);
    expect(c.state.hostNotices.map((n) => n.id)).toEqual([waiting.id, again.id]);
    t.push({ type: 'notice-gone', key: KEY, id: waiting.id });
    expect(c.state.hostNotices.map((n) => n.id)).toEqual([again.id]);
    // Its OS notification goes too: shell 2 is no longer waiting.
    expect(closed).toEqual([waiting.id]);
  });

  it('shows the host’s agent-exit notice once: standing for the Thread on screen, a toast only for another Thread, without notification permission', async () => {
    const { c, t, timers } = setup();
    const c2 = new AppController(t, { setTimeout: (f) => timers.push(f), clearTimeout: () => undefined });
    c2.start();
    await settle();
    t.push({ type: 'agents', key: KEY, agents: [agent('a1', { name: 'shell 1', status: 'exited', exit: { code: 0, signal: 9 } }), agent('a2')] });
    t.push({ type: 'notify', key: KEY, ...agentExitedNotice('shell 1', { code: 0, signal: 9 }) });
    // One notice, one place (issue 44): it stands for the Thread on screen, and is not toasted as well.
    expect(c2.state.hostNotices.map((x) => x.title)).toEqual(['Agent exited: shell 1']);
    expect(c2.state.hostNotices[0]!.body).toBe('shell 1 was killed by signal 9.');
    expect(c2.state.toasts).toEqual([]);
    // A notice of a Thread not on screen cannot stand here: it is toasted, once.
    t.push({ type: 'notify', key: 'fedcba9876543210', ...agentExitedNotice('shell 9', { code: 1, signal: null }) });
    await settle();
    expect(c2.state.toasts.map((x) => x.title)).toEqual(['Agent exited: shell 9']);
    expect(c2.state.hostNotices.map((x) => x.title)).toEqual(['Agent exited: shell 1']);
    expect(c2.state.agents.a1!.status).toBe('exited');
    // untouched agents keep their object: their tabs do not re-render
    const a2 = c2.state.agents.a2;
    t.push({ type: 'agents', key: KEY, agents: [c2.state.agents.a1!, agent('a2')] });
    expect(c2.state.agents.a2).toBe(a2);
    void c;
  });

  it('shows every refused action in the banner with its code', async () => {
    const { c, t } = setup();
    c.start();
    await settle();
    t.on('task.approve', () => {
      throw new HostCallError('bad-state', 'T-1 is open; only a task in review can be approved');
    });
    expect(await c.actions.approveTask('T-1')).toBe(false);
    expect(c.state.errors).toEqual([{ id: expect.any(Number), code: 'bad-state', message: 'T-1 is open; only a task in review can be approved', action: 'approve T-1', actions: ['approve T-1'], count: 1 }]);
    c.notices.dismissError(c.state.errors[0]!.id);
    expect(c.state.errors).toEqual([]);
    expect(await c.actions.releaseTask('T-2')).toBe(true);
    expect(t.callsOf('task.release')).toEqual([{ key: KEY, taskId: 'T-2', writeKey: expect.stringMatching(WRITE_KEY_PATTERN) }]);
  });

  it('sends every board write with an idempotency key of its own action (issue 31), and nothing else with one', async () => {
    const { c, t } = setup();
    c.start();
    await settle();
    const a = c.actions;
    await a.setGoal('g');
    await a.setSettings({ notifyAgents: true });
    await a.addTask('x');
    await a.addTask('x'); // the same words twice are two actions: two tasks, two keys
    await a.editTask('T-1', { title: 'y' });
    await a.blockTask('T-1', 'r');
    await a.unblockTask('T-1');
    await a.assignTask('T-1', 'a1');
    await a.releaseTask('T-1');
    await a.approveTask('T-1');
    await a.rejectTask('T-1', 'r');
    await a.resetTask('T-1');
    await a.closeAgent('a2');
    const writes = t.calls.filter((x) => x.method !== 'agent.close' && x.method !== 'threads.list' && x.method !== 'thread.snapshot');
    expect(writes.map((x) => x.method)).toEqual([
      'board.setGoal', 'board.setSettings', 'task.add', 'task.add', 'task.edit', 'task.block', 'task.unblock', 'task.assign', 'task.release', 'task.approve', 'task.reject', 'task.reset',
    ]);
    const keys = writes.map((x) => x.params.writeKey as string);
    for (const k of keys) expect(k).toMatch(WRITE_KEY_PATTERN);
    expect(new Set(keys).size).toBe(keys.length);
    expect(t.callsOf('agent.close')).toEqual([{ key: KEY, agentId: 'a2' }]);
  });

  it('routes pane output to its pane, and acks output nobody shows', async () => {
    const { c, t, panes } = setup();
    c.start();
    await settle();
    t.push({ type: 'pane-data', key: KEY, agentId: 'a1', data: 'hello' });
    expect(panes.written).toEqual(['a1:hello']);
    expect(c.state.log).toHaveLength(3); // output never touches the store
    // Output nobody shows is acked in the same steps a terminal acks in, so it never holds a pane back.
    const step = FlowLimits.charCountAckSize;
    t.push({ type: 'pane-data', key: 'fedcba9876543210', agentId: 'x', data: 'y'.repeat(step + 1_000) });
    t.push({ type: 'pane-data', key: KEY, agentId: 'gone', data: 'z'.repeat(step) });
    expect(t.callsOf('agent.ack')).toEqual([
      { key: 'fedcba9876543210', agentId: 'x', chars: step + 1_000 },
      { key: KEY, agentId: 'gone', chars: step },
    ]);
  });

  it('launches at the size a pane shows and switches to the new tab', async () => {
    const { c, t } = setup();
    c.start();
    await settle();
    t.on('agent.launch', (p) => agent('a3', { name: `${p.profile} 1` }));
    await c.launch('custom', 'npx my-agent');
    expect(t.callsOf('agent.launch')).toEqual([{ key: KEY, profile: 'custom', command: 'npx my-agent', cols: 120, rows: 40 }]);
    expect(c.state.agentIds).toEqual(['a1', 'a2', 'a3']);
    expect(c.state.activeAgentId).toBe('a3');
  });

  it("resumes an exited agent's conversation in its own tab: same id, same place, its terminal kept", async () => {
    const { c, t, panes, setAgents } = setup();
    setAgents([agent('a1', { name: 'shell 1' }), agent('a2', { name: 'claude 1', profile: 'claude', status: 'exited', pid: null, exit: { code: 0, signal: 9 }, resumable: true })]);
    c.start();
    await settle();
    expect(c.state.agents.a2?.resumable).toBe(true);
    const synced = panes.restores.length;
    t.on('agent.resume', (p) => agent(p.agentId, { name: 'claude 1', profile: 'claude', status: 'running', pid: 4321, resumable: false }));
    const a = await c.resume('a2');
    expect(t.callsOf('agent.resume')).toEqual([{ key: KEY, agentId: 'a2' }]);
    expect(a).toMatchObject({ id: 'a2', status: 'running' });
    expect(c.state.agentIds).toEqual(['a1', 'a2']);
    expect(c.state.agents.a2).toMatchObject({ status: 'running', pid: 4321, resumable: false });
    expect(c.state.activeAgentId).toBe('a2');
    // The same tab: no pane was made or dropped, so its terminal goes on with the resumed output.
    expect(panes.restores.length).toBe(synced);
  });

  it('after a reconnect fetches the board and every terminal screen again', async () => {
    const { c, t, panes, host, skipEvents } = setup();
    c.start();
    await settle();
    t.setState('connecting');
    expect(c.state.connection).toBe('connecting');
    host.engine.claim('a1', 'T-1'); // missed while away
    skipEvents();
    t.setState('connected');
    await settle();
    expect(c.state.connection).toBe('connected');
    expect(c.state.columns.claimed).toEqual(['T-1']);
    expect(panes.restores.at(-1)).toEqual({ ids: ['a1', 'a2'], all: true });
  });

  it("lists another host's agent (shared board) with no terminal: no pane, so no screen, input, resize or ack is asked for it; it is not closed, relaunched or resumed from here; it takes a task", async () => {
    const { c, t, panes, setAgents, host, pushEvents } = setup();
    const remote = agent('b1', { name: 'shell 1', host: 'build-box', pid: null });
    // Listed first, the window still opens on a terminal it has.
    setAgents([remote, agent('a1', { name: 'shell 1' })]);
    c.start();
    await settle();
    expect(c.state.agentIds).toEqual(['b1', 'a1']);
    expect(c.state.agents.b1?.host).toBe('build-box');
    expect(c.state.activeAgentId).toBe('a1');
    expect(panes.restores).toEqual([{ ids: ['a1'], all: false }]);
    // Another host's agent joins the list: still no pane for either of that host's.
    t.push({ type: 'agents', key: KEY, agents: [remote, agent('a1', { name: 'shell 1' }), agent('b2', { host: 'build-box', pid: null })] });
    expect(c.state.agentIds).toEqual(['b1', 'a1', 'b2']);
    expect(panes.ids).toEqual(['a1']);
    c.selectAgent('b1');
    expect(c.state.activeAgentId).toBe('b1');
    expect(await c.relaunch('b1')).toBeNull();
    expect(await c.resume('b1')).toBeNull();
    expect(await c.actions.closeAgent('b1')).toBe(false);
    for (const m of ['agent.relaunch', 'agent.resume', 'agent.close', 'agent.screen', 'agent.input', 'agent.resize', 'agent.ack'] as const) expect(t.callsOf(m)).toEqual([]);
    // A drop on its tab is an assignment like any other; that host types it into its pane.
    expect(await c.actions.assignTask('T-1', 'b1')).toBe(true);
    expect(t.callsOf('task.assign')).toEqual([{ key: KEY, taskId: 'T-1', agentId: 'b1', writeKey: expect.stringMatching(WRITE_KEY_PATTERN) }]);
    // Both hosts have a "shell 1": the window's words tell them apart by host.
    host.engine.claim('a1', 'T-1');
    host.engine.assign('T-1', 'b1');
    pushEvents();
    expect(c.state.log.at(-1)?.summary).toBe('T-1 reassigned from shell 1 to shell 1 on build-box by you (token 2)');
    expect(c.agentName('b1')).toBe('shell 1 on build-box');
    // After a reconnect every terminal is restored: still only this host's.
    t.setState('connecting');
    t.setState('connected');
    await settle();
    expect(panes.restores.at(-1)).toEqual({ ids: ['a1'], all: true });
  });

  it('keeps the tab a person chose when the agent list changes', async () => {
    const { c, t } = setup();
    c.start();
    await settle();
    c.selectAgent('a2');
    t.push({ type: 'agents', key: KEY, agents: [agent('a1'), agent('a2'), agent('a3')] });
    expect(c.state.activeAgentId).toBe('a2');
    t.push({ type: 'agents', key: KEY, agents: [agent('a1'), agent('a3')] });
    expect(c.state.activeAgentId).toBe('a1');
  });

  it('ignores pushes about other Threads (except to keep the list current)', async () => {
    const { c, t } = setup({ threads: [{ key: KEY, open: true }, { key: 'fedcba9876543210', open: true }] });
    c.start();
    await settle();
    await c.loadThread(KEY);
    const other: BoardEvent = { seq: 99, at: 0, mono: 0, kind: 'goal-set', goal: 'elsewhere', by: 'user' };
    t.push({ type: 'board-event', key: 'fedcba9876543210', event: other });
    expect(c.state.goal).toBe('ship it');
    expect(c.state.threads.find((x) => x.key === 'fedcba9876543210')?.goal).toBe('elsewhere');
  });
});

describe('a window made for one Thread', () => {
  it('opens the Thread named in its URL even when several are open', async () => {
    const host = engineWith(['a']);
    const t = new FakeTransport();
    t.on('threads.list', () => [
      { key: 'fedcba9876543210', open: true, folder: '/q', goal: '' },
      { key: KEY, open: true, folder: '/p', goal: '' },
    ]);
    t.on('thread.snapshot', (p) => snapshotOf(host.engine, { key: p.key }));
    const c = new AppController(t, { initialThread: KEY });
    c.start();
    await settle();
    expect(c.state.activeKey).toBe(KEY);
    expect(t.callsOf('thread.snapshot')).toEqual([{ key: KEY }]);
  });

  it("asks for its Thread's snapshot together with the Thread list, not after the list has come", async () => {
    const host = engineWith(['a', 'b']);
    const t = new FakeTransport();
    let listed!: () => void;
    t.on('threads.list', () => new Promise((resolve) => (listed = () => resolve([{ key: KEY, open: true, folder: '/p', goal: '' }]))));
    t.on('thread.snapshot', (p) => snapshotOf(host.engine, { key: p.key }));
    const c = new AppController(t, { initialThread: KEY });
    c.start();
    await settle();
    expect(t.callsOf('thread.snapshot')).toEqual([{ key: KEY }]);
    expect(c.state.board?.tasks.size).toBe(2); // drawn while the list is still on its way
    listed();
    await settle();
    expect(c.state.threads.map((x) => x.key)).toEqual([KEY]);
    expect(t.callsOf('thread.snapshot')).toHaveLength(1);
  });

  it('a remembered Thread the host no longer has open is opened again from its folder, with no error shown', async () => {
    const host = engineWith(['a']);
    const t = new FakeTransport();
    let open = false;
    t.on('threads.list', () => [{ key: KEY, open, folder: '/p', goal: '' }]);
    t.on('thread.snapshot', (p) => {
      if (!open) throw new HostCallError('no-such-thread', `Thread ${p.key} is not open`);
      return snapshotOf(host.engine, { key: p.key });
    });
    t.on('threads.open', (p) => ((open = true), { key: KEY, folder: p.folder, goal: '', open: true }));
    const c = new AppController(t, { initialThread: KEY });
    c.start();
    await settle();
    await settle();
    expect(t.callsOf('threads.open')).toEqual([{ folder: '/p' }]);
    expect(c.state.activeKey).toBe(KEY);
    expect(c.state.board?.tasks.size).toBe(1);
    expect(c.state.errors).toEqual([]);
  });

  it('a remembered Thread the host does not know at all leaves the window on the Thread list, saying nothing', async () => {
    const t = new FakeTransport();
    t.on('threads.list', () => [{ key: 'fedcba9876543210', open: true, folder: '/q', goal: '' }, { key: 'aaaaaaaaaaaaaaaa', open: true, folder: '/r', goal: '' }]);
    t.on('thread.snapshot', (p) => {
      throw new HostCallError('no-such-thread', `Thread ${p.key} is not open`);
    });
    const c = new AppController(t, { initialThread: KEY });
    c.start();
    await settle();
    expect(c.state.activeKey).toBeNull();
    expect(c.state.threadsLoaded).toBe(true);
    expect(c.state.errors).toEqual([]);
  });

  it('a remembered Thread the host does not know, with exactly one other open: that one is shown, as for a window that asked for none', async () => {
    const host = engineWith(['a']);
    const t = new FakeTransport();
    const other = 'fedcba9876543210';
    t.on('threads.list', () => [{ key: other, open: true, folder: '/q', goal: '' }]);
    t.on('thread.snapshot', (p) => {
      if (p.key !== other) throw new HostCallError('no-such-thread', `Thread ${p.key} is not open`);
      return snapshotOf(host.engine, { key: other });
    });
    const c = new AppController(t, { initialThread: KEY });
    c.start();
    await settle();
    await settle();
    expect(c.state.activeKey).toBe(other);
    expect(c.state.board?.tasks.size).toBe(1);
    expect(c.state.errors).toEqual([]);
  });

  it('names a closed agent in log lines by the name it had', async () => {
    const { c, t, host, pushEvents } = setup();
    c.start();
    await settle();
    host.engine.claim('a2', 'T-1');
    t.push({ type: 'agents', key: KEY, agents: [agent('a1', { name: 'shell 1' })] });
    host.engine.releaseAllHeldBy('a2', 'pane-closed');
    pushEvents();
    expect(c.state.log.at(-1)!.summary).toBe("T-1: shell 2's claim ended, pane closed → open");
  });
});

describe('git worktrees in the window', () => {
  const wt = (taskId: string, o: Partial<WorktreeInfo> = {}): WorktreeInfo => ({
    taskId,
    title: taskId,
    path: `/data/wt/${taskId}`,
    branch: `forkbench/${taskId}`,
    base: 'main',
    held: false,
    missing: false,
    uncommitted: 0,
    ahead: 1,
    ...o,
  });

  it("keeps the snapshot's git isolation, and reads it again when the base branch changes", async () => {
    const { c, t, host, pushEvents } = setup();
    let git: ThreadSnapshot['git'] = { isolated: true, repoRoot: '/work/project', baseBranch: 'main' };
    const snap = t.handlers['thread.snapshot']!;
    t.on('thread.snapshot', (p) => ({ ...(snap(p) as ThreadSnapshot), git }));
    c.start();
    await settle();
    expect(c.state.git).toEqual(git);
    host.engine.setSettings({ leaseMs: 60_000 }); // base unchanged: nothing to read again
    pushEvents();
    await settle();
    expect(t.callsOf('thread.snapshot')).toHaveLength(1);
    git = { isolated: true, repoRoot: '/work/project', baseBranch: 'develop' };
    host.engine.setSettings({ baseBranch: 'develop' });
    pushEvents();
    await settle();
    expect(t.callsOf('thread.snapshot')).toHaveLength(2);
    expect(c.state.git).toEqual(git);
    expect(c.state.leaseMs).toBe(60_000);
  });

  it('fetches the worktree list only while the panel is open, again after events that change it', async () => {
    const { c, t, host, pushEvents } = setup();
    let list = [wt('T-1')];
    t.on('worktree.list', () => list);
    c.start();
    await settle();
    host.engine.claim('a1', 'T-1');
    pushEvents();
    await settle();
    expect(t.callsOf('worktree.list')).toHaveLength(0);
    c.worktrees.toggleWorktrees();
    await settle();
    expect(c.state.worktreesOpen).toBe(true);
    expect(c.state.worktrees).toEqual(list);
    list = [wt('T-1', { held: true }), wt('T-2')];
    host.engine.claim('a2', 'T-2');
    host.engine.note('a2', 'T-2', 'no list change'); // a note changes no worktree
    pushEvents();
    await settle();
    expect(t.callsOf('worktree.list')).toHaveLength(2);
    expect(c.state.worktrees).toEqual(list);
    c.worktrees.toggleWorktrees();
    host.engine.release('a2', 'T-2');
    pushEvents();
    await settle();
    expect(t.callsOf('worktree.list')).toHaveLength(2);
  });

  it('folds a burst of events into one more fetch after the one running', async () => {
    const { c, t } = setup();
    let release!: () => void;
    t.on('worktree.list', () => new Promise((r) => (release = () => r([wt('T-1')]))));
    c.start();
    await settle();
    c.worktrees.toggleWorktrees();
    await settle();
    void c.worktrees.refreshWorktrees();
    void c.worktrees.refreshWorktrees();
    expect(t.callsOf('worktree.list')).toHaveLength(1);
    release();
    await settle();
    expect(t.callsOf('worktree.list')).toHaveLength(2);
    release();
    await settle();
    expect(t.callsOf('worktree.list')).toHaveLength(2);
    expect(c.state.worktrees).toEqual([wt('T-1')]);
  });

  it('asks before removing a worktree with work in it, and removes it when told to', async () => {
    const { c, t } = setup();
    t.on('worktree.list', () => []);
    t.on('worktree.remove', (p) => {
      if (!p.force) throw new HostCallError('uncommitted', 'T-1 has 2 uncommitted changes and 1 unmerged commit');
      return null;
    });
    c.start();
    await settle();
    expect(await c.worktrees.removeWorktree('T-1', false)).toEqual({ kind: 'confirm', message: 'T-1 has 2 uncommitted changes and 1 unmerged commit' });
    expect(c.state.errors).toEqual([]); // a question, not an error
    expect(await c.worktrees.removeWorktree('T-1', true)).toEqual({ kind: 'removed' });
    expect(t.callsOf('worktree.remove')).toEqual([
      { key: KEY, taskId: 'T-1', force: false },
      { key: KEY, taskId: 'T-1', force: true },
    ]);
    t.on('worktree.remove', () => {
      throw new HostCallError('bad-state', 'T-2 is held by shell 1');
    });
    expect(await c.worktrees.removeWorktree('T-2', false)).toEqual({ kind: 'failed' });
    expect(c.state.errors.map((e) => [e.code, e.action])).toEqual([['bad-state', 'remove the worktree of T-2']]);
  });

  it("lists another board's folders apart with the list, and asks before clearing one that would lose work", async () => {
    const { c, t } = setup();
    const other = (path: string, o: Partial<OtherBoardFolder> = {}): OtherBoardFolder => ({
      path,
      board: '1a2b3c4d',
      thisBoard: false,
      taskId: 'T-1',
      token: 1,
      branch: 'forkbench/1a2b3c4d/T-1',
      uncommitted: 0,
      unreachable: false,
      ...o,
    });
    let others = [other('/data/worktrees/1a2b3c4d/a/T-1-1'), other('/data/worktrees/1a2b3c4d/a/T-2-2', { taskId: 'T-2', token: 2, uncommitted: 3 })];
    t.on('worktree.list', () => [wt('T-1')]);
    t.on('worktree.others', () => others);
    t.on('worktree.clear', (p) => {
      if (p.path.endsWith('T-2-2') && !p.force) throw new HostCallError('uncommitted', `${p.path} has 3 uncommitted changes: removing it loses them.`);
      others = others.filter((o) => o.path !== p.path);
      return null;
    });
    c.start();
    await settle();
    c.worktrees.toggleWorktrees();
    await settle();
    // Apart from this board's worktrees, never among them.
    expect(c.state.worktrees).toEqual([wt('T-1')]);
    expect(c.state.otherFolders).toEqual(others);
    expect(await c.worktrees.clearFolder('/data/worktrees/1a2b3c4d/a/T-2-2', false)).toEqual({ kind: 'confirm', message: '/data/worktrees/1a2b3c4d/a/T-2-2 has 3 uncommitted changes: removing it loses them.' });
    expect(c.state.errors).toEqual([]); // a question, not an error
    expect(c.state.otherFolders).toHaveLength(2);
    expect(await c.worktrees.clearFolder('/data/worktrees/1a2b3c4d/a/T-1-1', false)).toEqual({ kind: 'removed' });
    // No board event says a folder of another board went: the list is read again after the answer.
    expect(c.state.otherFolders?.map((o) => o.path)).toEqual(['/data/worktrees/1a2b3c4d/a/T-2-2']);
    expect(t.callsOf('worktree.clear')).toEqual([
      { key: KEY, path: '/data/worktrees/1a2b3c4d/a/T-2-2', force: false },
      { key: KEY, path: '/data/worktrees/1a2b3c4d/a/T-1-1', force: false },
    ]);
  });

  it('answers why an approval did not merge, and shows it in the banner too', async () => {
    const { c, t } = setup();
    t.on('task.approve', () => {
      throw new HostCallError('merge-conflict', 'forkbench/T-1 does not merge cleanly into main: src/a.ts');
    });
    c.start();
    await settle();
    const err = await c.actions.approveWithReason('T-1');
    expect(err).toEqual({ code: 'merge-conflict', message: 'forkbench/T-1 does not merge cleanly into main: src/a.ts' });
    expect(c.state.errors.map((e) => [e.code, e.action])).toEqual([['merge-conflict', 'approve T-1']]);
    expect(await c.actions.approveTask('T-1')).toBe(false);
  });

  it('forgets the review dialog and the worktree panel when another Thread is shown', async () => {
    const other = 'fedcba9876543210';
    const { c, t } = setup({ threads: [{ key: KEY, open: true }, { key: other, open: true }] });
    t.on('worktree.list', () => [wt('T-1')]);
    c.start();
    await settle();
    await c.loadThread(KEY);
    c.worktrees.toggleWorktrees();
    c.worktrees.openReview('T-1');
    await settle();
    expect(c.state.reviewTaskId).toBe('T-1');
    await c.loadThread(other);
    expect(c.state).toMatchObject({ reviewTaskId: null, worktreesOpen: false, worktrees: null, otherFolders: null });
  });
});
