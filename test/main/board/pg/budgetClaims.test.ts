/**
 * Issue 47, item 3, on a shared board: two hosts on one PostgreSQL board, one recording usage that spends the
 * Thread's budget, the other's agent claiming a task. The refusal is decided under the board's lock on the
 * board as it is then (every row up to the head), so a host that has not yet heard of the spending still
 * refuses, and in a race the log never has an agent's grant after the spending that stopped it.
 */
import { describe, expect, it } from 'vitest';
import type { PgBoard } from '../../../../src-main/board/pg/pgBoard.js';
import { budgetStop } from '../../../../src-shared/board/budgetGate.js';
import { applyEvent, emptyBoard } from '../../../../src-shared/board/reducer.js';
import { billedTokens } from '../../../../src-shared/usage/costFold.js';
import { pgHostsForFile } from '../../../helpers/pgHosts.js';
import { turn } from '../../../helpers/usageEvents.js';

const { freshDb, host } = pgHostsForFile({ name: 'budget-claims', threadId: 'thread-1', goal: 'ship it' });

/** `tokens` of agent-a's overhead (it holds nothing), read from its CLI's records on host A. */
const spendOn = (a: PgBoard, id: string, tokens: number) => a.run((e) => e.recordUsage('agent-a', 'claude', [turn(id, { input: tokens }, { model: null })]));

/** The Thread's budget set to what it spent plus `more` tokens, by the person on host A. */
async function budgetLeft(a: PgBoard, more: number): Promise<void> {
  const spent = billedTokens(a.state.costs.thread.tokens);
  const r = await a.run((e) => e.setBudget(null, { unit: 'tokens', limit: spent + more }));
  expect(r.ok).toBe(true);
}

async function twoHosts() {
  const url = await freshDb();
  const a = await host(url, 'host-a');
  const b = await host(url, 'host-b');
  a.hostAgent('agent-a', { name: 'agent-a', profile: 'claude' });
  b.hostAgent('agent-b', { name: 'agent-b', profile: 'claude' });
  return { a, b };
}

describe('a spent budget on a shared board (issue 47)', () => {
  it('a claim on the other host, sent the moment the spending committed, is refused over-budget', async () => {
    const { a, b } = await twoHosts();
    for (let i = 1; i <= 2; i++) expect((await a.run((e) => e.addTask({ title: `task ${i}` }))).ok).toBe(true);
    await budgetLeft(a, 100);
    expect((await spendOn(a, 'u1', 100)).ok).toBe(true);
    const r = await b.run((e) => e.claim('agent-b', 'T-2'));
    expect(r).toMatchObject({ ok: false, error: { code: 'over-budget', message: expect.stringContaining('the Thread has spent its budget (100 of 100 tokens)') } });
    expect(b.state.tasks.get('T-2')).toMatchObject({ state: 'open', claim: null });
    // Raised on host A: host B's agent claims it.
    await budgetLeft(a, 50);
    expect(await b.run((e) => e.claim('agent-b', 'T-2'))).toMatchObject({ ok: true, value: { taskId: 'T-2', agentId: 'agent-b' } });
  });

  it('racing: spending that crosses the budget and a claim on the other host; no agent’s grant follows the spending in the log', async () => {
    const { a, b } = await twoHosts();
    // Rounds, each a fresh race: the budget raised to 10 tokens more than spent, then 10 spent against a claim.
    const rounds = 12;
    for (let i = 1; i <= rounds; i++) expect((await a.run((e) => e.addTask({ title: `task ${i}` }))).ok).toBe(true);
    const outcomes: string[] = [];
    for (let i = 1; i <= rounds; i++) {
      await budgetLeft(a, 10);
      const [spent, claim] = await Promise.all([spendOn(a, `r${i}`, 10), b.run((e) => e.claim('agent-b', `T-${i}`))]);
      expect(spent.ok).toBe(true);
      if (claim.ok) {
        outcomes.push('granted');
        expect((await b.run((e) => e.release('agent-b', `T-${i}`))).ok).toBe(true);
      } else {
        outcomes.push(claim.error.code);
        expect(claim.error.code).toBe('over-budget');
      }
    }
    expect(outcomes).toHaveLength(rounds);
    // The committed log, replayed: every grant an agent took for itself was decided on a board whose budget
    // was not spent; every refusal for the budget, on one where it was.
    const log = await a.log();
    const board = emptyBoard('thread-1');
    let grants = 0;
    let refusals = 0;
    for (const e of log) {
      if ((e.kind === 'grant' && e.by === e.agentId) || (e.kind === 'write-rejected' && e.code === 'over-budget')) {
        const t = board.tasks.get(e.taskId as string);
        expect(t).toBeDefined();
        const stop = budgetStop(t!, { settings: board.settings, thread: board.costs.thread });
        if (e.kind === 'grant') {
          grants++;
          expect(stop).toBeNull();
        } else {
          refusals++;
          expect(stop).not.toBeNull();
        }
      }
      applyEvent(board, e);
    }
    expect(grants + refusals).toBe(rounds);
    expect(grants).toBe(outcomes.filter((o) => o === 'granted').length);
  });
});
