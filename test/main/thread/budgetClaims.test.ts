/**
 * Issue 47, item 3: a spent budget is the board's rule, not only dispatch's. An agent in a real shell pane that
 * types `forkbench claim` for a task whose own budget, or the Thread's, is spent is refused `over-budget` with
 * the budget named (and the refusal journaled), `forkbench why` says so, the person can still assign the task,
 * and once the person raises the budget the same claim is taken.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../../../src-shared/board/result.js';
import { InstalledProfiles } from '../../../src-main/window/installedProfiles.js';
import { ThreadApi } from '../../../src-main/window/threadApi.js';
import type { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { nextEvent, paneText } from '../../helpers/events.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { hostFixture } from '../../helpers/hosts.js';
import { turn, usageEvent } from '../../helpers/usageEvents.js';

const fixture = hostFixture('budget-claims');
beforeAll(() => ensureBuilt());
afterEach(() => fixture.cleanup());

async function openThread() {
  const host = await fixture.open({ typingQuietMs: 300 });
  const thread = new ThreadApi(host, new InstalledProfiles(), { kind: 'journal' });
  const shell = await thread.launchAgent({ key: thread.key, profile: 'shell', cols: 160, rows: 40 });
  return { host, thread, key: thread.key, shell };
}

/** One turn spent by an earlier agent, counted to `taskId` (null: its overhead, the Thread's only). */
function spend(host: ThreadHost, taskId: string | null, id: string, o: { usd?: number; tokens?: number }) {
  return host.board.run((e) => {
    usageEvent(e, { agentId: 'earlier', profile: 'custom', taskId, at: host.board.clock.wall(), turns: [turn(id, { input: o.tokens ?? 100 }, { model: null, usd: o.usd ?? null })] });
    return ok(null);
  });
}

/** Type `command` at the shell's prompt and wait for its output up to `mark` and its exit status. */
async function typed(host: ThreadHost, agentId: string, command: string, mark: string): Promise<{ out: string; status: number }> {
  // The mark is echoed with a quote in it as typed, so only the shell's own output matches `MARK-<status>`.
  const seen = paneText(host, agentId, new RegExp(`${mark}-(\\d+)`));
  host.roster.relay.input(agentId, `${command}; echo "${mark}"-$?\r`);
  const out = await seen;
  return { out, status: Number(new RegExp(`${mark}-(\\d+)`).exec(out)?.[1]) };
}

describe('a spent budget refuses claims (issue 47)', () => {
  it('a task’s spent budget: its claim from a pane is refused naming the budget, `why` says so; raised, the claim is taken', async () => {
    const { host, thread, key, shell } = await openThread();
    await thread.addTask({ key, title: 'port the parser' });
    await thread.setBudget({ key, taskId: 'T-1', budget: { unit: 'usd', limit: 1 } });
    await spend(host, 'T-1', 'a', { usd: 1.2 });

    const rejected = nextEvent(host, (e) => e.kind === 'write-rejected' && e.op === 'claim');
    const claim = await typed(host, shell.id, 'forkbench claim T-1', 'CLAIM1');
    expect(claim.status).not.toBe(0);
    expect(claim.out).toContain('over-budget');
    expect(claim.out).toContain('T-1 has spent its budget ($1.20 of $1.00): no agent may claim it until a person raises the budget or assigns it');
    expect(await rejected).toMatchObject({ agentId: shell.id, taskId: 'T-1', code: 'over-budget' });
    expect(host.board.state.tasks.get('T-1')).toMatchObject({ state: 'open', claim: null });

    const why = await typed(host, shell.id, 'forkbench why T-1', 'WHY1');
    expect(why.status).toBe(0);
    expect(why.out).toContain('over-budget: T-1 has spent its budget ($1.20 of $1.00)');
    expect(why.out).not.toContain('ready:');

    // Raised past what was spent: the same claim is taken, and `why` no longer says it.
    await thread.setBudget({ key, taskId: 'T-1', budget: { unit: 'usd', limit: 5 } });
    const again = await typed(host, shell.id, 'forkbench claim T-1', 'CLAIM2');
    expect(again.status).toBe(0);
    expect(host.board.state.tasks.get('T-1')).toMatchObject({ state: 'claimed', claim: { agentId: shell.id } });
    const held = await typed(host, shell.id, 'forkbench why T-1', 'WHY2');
    expect(held.out).toContain('held:');
    expect(held.out).not.toContain('over-budget');
  }, 60_000);

  it('a claim with no id passes a task whose budget is spent, and takes it again once raised', async () => {
    const { host, thread, key, shell } = await openThread();
    await thread.addTask({ key, title: 'dear' });
    await thread.addTask({ key, title: 'cheap' });
    await thread.setBudget({ key, taskId: 'T-1', budget: { unit: 'usd', limit: 1 } });
    await spend(host, 'T-1', 'a', { usd: 1 });
    const first = await typed(host, shell.id, 'forkbench claim', 'CLAIM1');
    expect(first.status, first.out).toBe(0);
    expect(host.board.engine.claimsOf(shell.id)).toEqual(['T-2']);
    const none = await typed(host, shell.id, 'forkbench claim', 'CLAIM2');
    expect(none.status).not.toBe(0);
    expect(host.board.state.tasks.get('T-1')).toMatchObject({ state: 'open', claim: null });
    await thread.setBudget({ key, taskId: 'T-1', budget: { unit: 'usd', limit: 2 } });
    const again = await typed(host, shell.id, 'forkbench claim', 'CLAIM3');
    expect(again.status).toBe(0);
    expect(host.board.engine.claimsOf(shell.id).sort()).toEqual(['T-1', 'T-2']);
  }, 60_000);

  it('the Thread’s spent budget: claims by id and of the next ready task are refused; the person can still assign', async () => {
    const { host, thread, key, shell } = await openThread();
    await thread.addTask({ key, title: 'one' });
    await thread.addTask({ key, title: 'two' });
    await thread.setBudget({ key, taskId: null, budget: { unit: 'tokens', limit: 10_000 } });
    await spend(host, null, 'o', { tokens: 10_000 });

    const byId = await typed(host, shell.id, 'forkbench claim T-2', 'CLAIM1');
    expect(byId.status).not.toBe(0);
    expect(byId.out).toContain("the Thread has spent its budget (10,000 of 10,000 tokens): no agent may claim T-2 until a person raises the Thread's budget or assigns it");
    const next = await typed(host, shell.id, 'forkbench claim', 'CLAIM2');
    expect(next.status).not.toBe(0);
    expect(next.out).toContain('over-budget');
    expect(next.out).toContain('the Thread has spent its budget (10,000 of 10,000 tokens): no agent may claim T-1');
    expect(host.board.engine.claimsOf(shell.id)).toEqual([]);
    const why = await typed(host, shell.id, 'forkbench why T-2', 'WHY1');
    expect(why.out).toContain('over-budget: the Thread has spent its budget (10,000 of 10,000 tokens)');

    // The person decides: giving it to the agent is one way.
    expect(await thread.assignTask({ key, taskId: 'T-2', agentId: shell.id })).toMatchObject({ taskId: 'T-2', agentId: shell.id });
    expect(host.board.engine.claimsOf(shell.id)).toEqual(['T-2']);
  }, 60_000);
});
