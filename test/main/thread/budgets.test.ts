/**
 * Issue 47, item 3, through a real Thread (board, panes, agents in real ptys) and the window's door into it:
 * a budget set in the window (`budget.set`) is told to the person once at 80 % and once spent, at the exact turn
 * that crosses each; once spent, the agent working under it is told in its pane, the board dispatches the task
 * to no agent, and the person decides: raising the budget withdraws the notice and lets the task be dispatched
 * again. The Thread's own budget (in tokens) stops all dispatch the same way, and tells every agent holding a task.
 * Usage reaches the board as helper B's recordUsage decides it: a usage event through the engine.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Notice } from '../../../src-shared/notices/notices.js';
import { ok } from '../../../src-shared/board/result.js';
import type { WindowPush } from '../../../src-shared/protocol/windowApi.js';
import { InstalledProfiles } from '../../../src-main/window/installedProfiles.js';
import { ThreadApi } from '../../../src-main/window/threadApi.js';
import type { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { nextEvent, paneText } from '../../helpers/events.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { hostFixture } from '../../helpers/hosts.js';
import { turn, usageEvent } from '../../helpers/usageEvents.js';

const fixture = hostFixture('budgets');
beforeAll(() => ensureBuilt());
afterEach(() => fixture.cleanup());

async function openThread() {
  const host = await fixture.open({ typingQuietMs: 300 });
  const thread = new ThreadApi(host, new InstalledProfiles(), { kind: 'journal' });
  const pushes: WindowPush[] = [];
  const sub = thread.pushes((p) => pushes.push(p));
  const budgetNotices = () => pushes.filter((p): p is Extract<WindowPush, { type: 'notify' }> => p.type === 'notify' && p.about.startsWith('budget:'));
  const current = (): Notice[] => host.notices.current().filter((n) => n.about.startsWith('budget:'));
  return { host, thread, key: thread.key, pushes, budgetNotices, current, dispose: () => sub.dispose() };
}

/** A custom agent (`cat`): the host's messages to it are shown in its pane's output, never typed. */
const launch = (thread: ThreadApi, name: string) => thread.launchAgent({ key: thread.key, profile: 'custom', command: `exec cat # ${name}`, cols: 120, rows: 30 });

/** One turn of `agentId`'s on `taskId` (null: its overhead), with the CLI's own money or tokens only. */
function spend(host: ThreadHost, agentId: string, taskId: string | null, id: string, o: { usd?: number; tokens?: number }) {
  return host.board.run((e) => {
    usageEvent(e, { agentId, profile: 'custom', taskId, at: host.board.clock.wall(), turns: [turn(id, { input: o.tokens ?? 100 }, { model: null, usd: o.usd ?? null })] });
    return ok(null);
  });
}

describe('budgets (issue 47)', () => {
  it('a task’s budget: 80% told once at the turn that crosses it, spent at the next, its agent told, no dispatch until raised', async () => {
    const t = await openThread();
    const { host, thread, key } = t;
    await thread.addTask({ key, title: 'port the parser' });
    const worker = await launch(thread, 'worker');
    await thread.assignTask({ key, taskId: 'T-1', agentId: worker.id });
    await thread.setBudget({ key, taskId: 'T-1', budget: { unit: 'usd', limit: 1 } });

    // $0.30 a turn: 30 %, 60 %, then 90 % (the notice), then 120 % (spent).
    await spend(host, worker.id, 'T-1', 'a', { usd: 0.3 });
    await spend(host, worker.id, 'T-1', 'b', { usd: 0.3 });
    expect(t.budgetNotices()).toEqual([]);
    await spend(host, worker.id, 'T-1', 'c', { usd: 0.3 });
    expect(t.budgetNotices().map((n) => [n.title, n.body])).toEqual([['Budget 80% spent: T-1', 'T-1 "port the parser" has spent $0.90 of $1.00 of its budget.']]);
    // Another turn under the same budget below the stop says nothing again.
    await spend(host, worker.id, 'T-1', 'c2', { usd: 0.05 });
    expect(t.budgetNotices()).toHaveLength(1);

    const told = paneText(host, worker.id, /Forkbench: T-1 "port the parser" has spent its budget \(\$1\.25 of \$1\.00\)\. Stop working on T-1 now and wait: the person decides whether to raise the budget or stop you\./);
    await spend(host, worker.id, 'T-1', 'd', { usd: 0.3 });
    await told;
    expect(t.budgetNotices().map((n) => n.title)).toEqual(['Budget 80% spent: T-1', 'Budget spent: T-1']);
    // The spent notice replaced the 80% one: one notice about the budget is current.
    expect(t.current().map((n) => n.title)).toEqual(['Budget spent: T-1']);
    expect(t.current()[0]!.body).toContain('Raise the budget to go on, or stop the agent.');

    // The person takes T-1 back; another idle agent with dispatch on is given nothing while T-1's budget is spent,
    // but a task with budget to spare, yes.
    await thread.releaseTask({ key, taskId: 'T-1' });
    await thread.setSettings({ key, patch: { dispatch: true } });
    const other = await launch(thread, 'other');
    const refused = await host.board.run((e) => e.dispatch(other.id));
    expect(refused).toMatchObject({ ok: false, error: { code: 'no-such-task' } });
    await thread.addTask({ key, title: 'something else' });
    expect(await host.board.run((e) => e.dispatch(other.id))).toMatchObject({ ok: true, value: { taskId: 'T-2' } });

    // Raised: the notice goes, and T-1 is dispatched again.
    await thread.setBudget({ key, taskId: 'T-1', budget: { unit: 'usd', limit: 5 } });
    expect(t.current()).toEqual([]);
    expect(t.pushes.some((p) => p.type === 'notice-gone')).toBe(true);
    const third = await launch(thread, 'third');
    expect(await host.board.run((e) => e.dispatch(third.id))).toMatchObject({ ok: true, value: { taskId: 'T-1' } });

    // The window's reads agree with the board: the task's figures and the Thread's.
    const cost = await thread.taskCost({ key, taskId: 'T-1' });
    expect(cost).toMatchObject({ usd: 1.25, turns: 5, budget: { budget: { unit: 'usd', limit: 5 }, used: 0.25 } });
    expect(thread.threadCost().tasks.map((r) => [r.key, r.usd])).toEqual([['T-1', 1.25]]);
    expect((await thread.costCsv({ key })).split('\r\n')[2]).toBe('task,T-1,port the parser,500,0,0,0,0,1.25,0,5');
    await expect(thread.setBudget({ key, taskId: 'T-9', budget: null })).rejects.toMatchObject({ code: 'no-such-task' });
    t.dispose();
  }, 60_000);

  it('a shell agent’s own `forkbench usage` reports: the stop comes at the exact report that spends the budget, and is told in its pane', async () => {
    const t = await openThread();
    const { host, thread, key } = t;
    await thread.addTask({ key, title: 'scripted work' });
    const shell = await thread.launchAgent({ key, profile: 'shell', cols: 120, rows: 30 });
    await thread.assignTask({ key, taskId: 'T-1', agentId: shell.id });
    await thread.setBudget({ key, taskId: 'T-1', budget: { unit: 'usd', limit: 1 } });
    /** One report typed at the shell's prompt, as a script of a custom agent would run it; resolves once recorded. */
    const report = async (n: number) => {
      const recorded = nextEvent(host, (e) => e.kind === 'usage' && e.turns[0]?.id === `step-${n}`);
      host.roster.relay.input(shell.id, `forkbench usage --input 1000 --output 100 --cost 0.45 --id step-${n}\r`);
      await recorded;
    };
    await report(1);
    expect(t.budgetNotices()).toEqual([]);
    await report(2);
    expect(t.budgetNotices().map((n) => n.title)).toEqual(['Budget 80% spent: T-1']);
    const told = paneText(host, shell.id, /Forkbench: T-1 "scripted work" has spent its budget \(\$1\.35 of \$1\.00\)/);
    await report(3);
    await told;
    expect(t.budgetNotices().map((n) => n.title)).toEqual(['Budget 80% spent: T-1', 'Budget spent: T-1']);
    expect(await thread.taskCost({ key, taskId: 'T-1' })).toMatchObject({ usd: 1.35, turns: 3, tokens: { input: 3000, output: 300 }, byAgent: [{ agentId: shell.id, turns: 3 }] });
    t.dispose();
  }, 60_000);

  it('the Thread’s budget in tokens: told at 80%, and once spent every agent holding a task is told and nothing is dispatched', async () => {
    const t = await openThread();
    const { host, thread, key } = t;
    await thread.addTask({ key, title: 'one' });
    await thread.addTask({ key, title: 'two' });
    await thread.addTask({ key, title: 'three' });
    const a = await launch(thread, 'a');
    const b = await launch(thread, 'b');
    await thread.assignTask({ key, taskId: 'T-1', agentId: a.id });
    await thread.assignTask({ key, taskId: 'T-2', agentId: b.id });
    await thread.setBudget({ key, taskId: null, budget: { unit: 'tokens', limit: 10_000 } });

    await spend(host, a.id, 'T-1', 'a1', { tokens: 4000 });
    await spend(host, b.id, null, 'b1', { tokens: 3999 });
    expect(t.budgetNotices()).toEqual([]);
    await spend(host, b.id, 'T-2', 'b2', { tokens: 1 });
    expect(t.budgetNotices().map((n) => n.title)).toEqual(['Budget 80% spent: the Thread']);

    const toldA = paneText(host, a.id, /Forkbench: This Thread has spent its budget \(10,000 of 10,000 tokens\)\. Stop working on T-1 now/);
    const toldB = paneText(host, b.id, /Forkbench: This Thread has spent its budget \(10,000 of 10,000 tokens\)\. Stop working on T-2 now/);
    await spend(host, a.id, null, 'a2', { tokens: 2000 });
    await Promise.all([toldA, toldB]);
    expect(t.budgetNotices().map((n) => n.title)).toEqual(['Budget 80% spent: the Thread', 'Budget spent: the Thread']);

    await thread.setSettings({ key, patch: { dispatch: true } });
    const idle = await launch(thread, 'idle');
    expect(await host.board.run((e) => e.dispatch(idle.id))).toMatchObject({
      ok: false,
      error: { code: 'bad-state', message: "the Thread's budget is spent (10,000 of 10,000 tokens): the board dispatches nothing until a person raises it" },
    });
    expect(thread.threadCost()).toMatchObject({ budget: { used: 1 }, thread: { turns: 4 } });
    t.dispose();
  }, 60_000);
});
