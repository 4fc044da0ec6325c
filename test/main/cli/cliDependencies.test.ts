import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../../src-main/agents/agent.js';
import type { BoardService } from '../../../src-main/board/boardService.js';
import type { WhyView } from '../../../src-shared/board/why.js';
import { CliBoard } from '../../helpers/cliBoard.js';

/**
 * Issue 34, items 1 and 3, end to end: the real `forkbench` CLI (and its MCP server) against a real board
 * host's socket and journal. Tasks wait on others with --after; a cycle, a task waiting on itself or on one
 * that does not exist is refused with the reason; `claim` with no id skips tasks that wait; `claim ID` of one
 * is refused naming what it waits on, unless --force, which the board notes; and `forkbench why` gives each
 * reason it knows, as a code and a sentence.
 */
let fx: CliBoard;
let board: BoardService;
let a: Agent;
let b: Agent;
beforeEach(async () => {
  fx = await CliBoard.open('deps');
  ({ board, a, b } = fx);
});
afterEach(() => fx.close());
const ok = (args: string[], agent?: Agent) => fx.ok(args, agent);
const refused = (args: string[], agent?: Agent) => fx.refused(args, agent);

const task = (id: string) => board.state.tasks.get(id);
const why = async (id: string): Promise<WhyView> => (JSON.parse(await ok(['why', id, '--json'])) as { result: WhyView }).result;
const codes = (w: WhyView) => w.reasons.map((r) => r.code);

describe('forkbench --after, claim and why', () => {
  it('add --after makes a task wait; show and board say on what; a missing task, itself or a cycle is refused naming it', async () => {
    await ok(['add', 'schema']);
    await ok(['add', 'api']);
    expect(await ok(['add', 'ui', '--after', 'T-1, t-2'])).toContain('Added T-3');
    expect(task('T-3')?.after).toEqual(['T-1', 'T-2']);
    expect(await ok(['show', 'T-3'])).toContain('after: T-1, T-2 (not done yet: T-1, T-2)');
    expect(await ok(['board'])).toMatch(/T-3 +open +ui {2}\(waits on T-1, T-2\)/);

    expect(await refused(['add', 'nowhere', '--after', 'T-9'])).toContain('refused (no-such-task): T-4 cannot wait on T-9: there is no task T-9');
    expect(board.state.tasks.size).toBe(3);
    expect(await refused(['add', 'bad id', '--after', 'T-1,banana'])).toContain('a task id looks like T-12');

    // Only the holder edits through the CLI; its claim stands while what the task waits on changes.
    const token = JSON.parse(await ok(['claim', 'T-1', '--json'])).result.token as number;
    expect(await refused(['edit', 'T-1', '--after', 'T-1'])).toContain('T-1 cannot wait on itself');
    expect(await refused(['edit', 'T-1', '--after', 'T-3'])).toContain('refused (invalid-input): T-1 cannot wait on T-3: that would close a cycle, T-1 → T-3 → T-1');
    expect(task('T-1')?.after ?? []).toEqual([]);
    await ok(['edit', 'T-1', '--after', 'T-2']);
    expect(task('T-1')?.after).toEqual(['T-2']);
    expect(task('T-1')?.claim).toMatchObject({ agentId: a.id, token });
    // '' and none both clear it.
    await ok(['edit', 'T-1', '--after', '']);
    expect(task('T-1')?.after ?? []).toEqual([]);
    await ok(['edit', 'T-1', '--after', 'T-2']);
    await ok(['edit', 'T-1', '--after', 'none']);
    expect(task('T-1')?.after ?? []).toEqual([]);
    // Not the holder: refused, whatever the edit.
    expect(await refused(['edit', 'T-3', '--after', 'none'], b)).toContain('refused (not-holder)');
  });

  it('claim with no id skips a task that waits; claim ID of it is refused naming what it waits on; --force takes it and the board notes it', async () => {
    await ok(['add', 'first']);
    await ok(['add', 'second']);
    // A person makes the lower-numbered task wait on the other (the window's field does this).
    await board.run((e) => e.editTask('T-1', {}, 'user', ['T-2']));
    expect(await ok(['claim'], b)).toContain('Claimed T-2');
    expect(await refused(['claim'])).toContain('refused (no-such-task): no ready task to claim: 1 open task waits on others (T-1 on T-2 (claimed))');

    const stderr = await refused(['claim', 'T-1']);
    expect(stderr).toContain('refused (not-ready): T-1 waits on T-2 (claimed)');
    expect(stderr).toContain('--force');
    expect(task('T-1')?.state).toBe('open');

    expect(await ok(['claim', 'T-1', '--force'])).toContain('Claimed T-1');
    expect(task('T-1')?.claim?.agentId).toBe(a.id);
    expect(task('T-1')?.notes.map((n) => `${n.by}: ${n.text}`)).toEqual([`forkbench: claimed by ${a.id} before T-2 was done, forced`]);
    expect(await ok(['show', 'T-1'])).toContain(`claimed by ${a.id} before T-2 was done, forced`);
  });

  it('a task waits until every task it waits on is done, and again if one comes back (fail closed)', async () => {
    await ok(['add', 'one']);
    await ok(['add', 'two']);
    await ok(['add', 'three', '--after', 'T-1,T-2']);
    await ok(['claim', 'T-1']);
    await ok(['done', 'T-1']);
    await board.run((e) => e.approve('T-1'));
    // T-2 is still open: the next claim takes T-2, not T-3.
    expect(await ok(['claim'], b)).toContain('Claimed T-2');
    await ok(['done', 'T-2'], b);
    expect((await why('T-3')).reasons).toEqual([{ code: 'waiting-on', text: `T-3 waits on T-2, which is in review (held by ${b.id})`, taskIds: ['T-2'] }]);
    // Rejected back: still not done, so T-3 still waits.
    await board.run((e) => e.rejectReview('T-2', 'not yet'));
    expect(await refused(['claim'])).toContain('no ready task to claim');
    await ok(['done', 'T-2'], b);
    await board.run((e) => e.approve('T-2'));
    expect(codes(await why('T-3'))).toEqual(['ready']);
    expect(await ok(['claim'])).toContain('Claimed T-3');
  });

  it('forkbench why says each reason: waiting on, held, in review, done, blocked, needs-attention after its failed claims, ready', async () => {
    await board.run((e) => e.setSettings({ poisonLimit: 2 }));
    for (const t of ['base', 'feature', 'blocked one', 'flaky', 'free']) await ok(['add', t]);
    await board.run((e) => e.editTask('T-2', {}, 'user', ['T-1']));
    await board.run((e) => e.block('T-3', 'waiting for the API key'));
    // T-4's claims fail twice (its agent's process exits): needs-attention.
    for (let i = 0; i < 2; i++) {
      await ok(['claim', 'T-4'], b);
      await board.run((e) => ok2(e.releaseAllHeldBy(b.id, 'process-exited')));
    }

    expect(await why('T-2')).toMatchObject({ taskId: 'T-2', state: 'open', after: ['T-1'], reasons: [{ code: 'waiting-on', text: 'T-2 waits on T-1, which is open', taskIds: ['T-1'] }] });
    expect((await why('T-3')).reasons).toEqual([{ code: 'blocked', text: 'T-3 is blocked: waiting for the API key; a person unblocks it' }]);
    expect((await why('T-4')).reasons).toEqual([{ code: 'needs-attention', text: `T-4 is in needs-attention after 2 failed claims (the last, ${b.id}'s, ended: process-exited); a person resets it` }]);
    expect((await why('T-5')).reasons).toEqual([{ code: 'ready', text: 'T-5 is ready: nothing stops it, and the next agent to claim takes it' }]);

    await ok(['claim', 'T-1']);
    expect((await why('T-1')).reasons).toEqual([{ code: 'held', text: `T-1 is held by ${a.id}: it is running` }]);
    // The human form: one line per reason, its code first.
    expect(await ok(['why', 'T-2'])).toBe(`T-2 "feature": open\n  waiting-on: T-2 waits on T-1, which is claimed (held by ${a.id})\n`);
    await ok(['done', 'T-1']);
    expect(codes(await why('T-1'))).toEqual(['in-review']);
    await board.run((e) => e.approve('T-1'));
    expect(codes(await why('T-1'))).toEqual(['done']);
    expect(codes(await why('T-2'))).toEqual(['ready']);
    expect(await refused(['why', 'T-99'])).toContain('refused (no-such-task): no task T-99');
  });

  it('MCP: why and add with after are tools; claim takes force', async () => {
    await ok(['add', 'first']);
    const { byName, tool } = await fx.mcp();
    expect(byName.get('why')).toBeDefined();
    expect(Object.keys(byName.get('claim')?.inputSchema.properties ?? {})).toContain('force');

    const added = await tool(3, 'add', { title: 'second', after: 'T-1' });
    expect(added.result.isError, added.result.content[0]?.text).toBeFalsy();
    expect(task('T-2')?.after).toEqual(['T-1']);
    const w = await tool(4, 'why', { taskId: 'T-2' });
    expect((JSON.parse(w.result.content[0]?.text ?? '') as WhyView).reasons.map((r) => r.code)).toEqual(['waiting-on']);
    const plain = await tool(5, 'claim', { taskId: 'T-2' });
    expect(plain.result.isError).toBe(true);
    expect(plain.result.content[0]?.text).toContain('refused (not-ready): T-2 waits on T-1 (open)');
    const forced = await tool(6, 'claim', { taskId: 'T-2', force: true });
    expect(forced.result.isError, forced.result.content[0]?.text).toBeFalsy();
    expect(task('T-2')?.claim?.agentId).toBe(a.id);
  });
});

/** A host signal's answer as a Result, for board.run. */
function ok2<T>(value: T) {
  return { ok: true as const, value };
}
