import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { claimAt, copyLedger, deserializeLedger, emptyLedger, foldUsageLedger, LedgerBounds, serializeLedger, turnDigest, type UsageLedger } from '../../../src-shared/board/usageLedger.js';

/**
 * Issue 47: the usage ledger the reducer folds (which claims each agent held when, what it last acted on, which
 * turn ids are recorded) stays bounded however long the Thread runs, and costs a renewal nothing.
 */
let seq = 0;
const ev = (body: Record<string, unknown>, at: number): BoardEvent => ({ ...body, seq: ++seq, at, mono: at }) as unknown as BoardEvent;
const grant = (agentId: string, taskId: string, token: number, at: number) => ev({ kind: 'grant', taskId, agentId, token, deadline: at + 120_000, by: agentId }, at);
const ended = (agentId: string, taskId: string, token: number, at: number) => ev({ kind: 'claim-ended', taskId, agentId, token, reason: 'released', to: 'open' }, at);
const renew = (agentId: string, taskId: string, token: number, at: number, via = 'write') => ev({ kind: 'renew', taskId, agentId, token, deadline: at + 120_000, via }, at);

const fold = (events: BoardEvent[], l: UsageLedger = emptyLedger()) => events.reduce(foldUsageLedger, l);

describe('the usage ledger', () => {
  it("is the same object after a renewal that turns to no other task, or the liveness check's: the hot path allocates nothing", () => {
    const l = fold([grant('a', 'T-1', 1, 10), renew('a', 'T-1', 1, 20)]);
    expect(foldUsageLedger(l, renew('a', 'T-1', 1, 30))).toBe(l);
    expect(foldUsageLedger(l, renew('a', 'T-1', 1, 30, 'liveness'))).toBe(l);
    expect(foldUsageLedger(l, ev({ kind: 'note', taskId: 'T-1', by: 'a', text: 'x' }, 40))).toBe(l);
  });

  it('answers held, last-acted or overhead by time, and a span ends where its claim did', () => {
    const l = fold([grant('a', 'T-1', 1, 100), grant('a', 'T-2', 2, 200), renew('a', 'T-1', 1, 300), ended('a', 'T-1', 1, 400)]);
    expect(claimAt(l.agents.get('a'), 99)).toEqual({ taskId: null, token: null, how: 'overhead' });
    expect(claimAt(l.agents.get('a'), 100)).toEqual({ taskId: 'T-1', token: 1, how: 'held' });
    expect(claimAt(l.agents.get('a'), 250)).toEqual({ taskId: 'T-2', token: 2, how: 'last-acted' });
    expect(claimAt(l.agents.get('a'), 350)).toEqual({ taskId: 'T-1', token: 1, how: 'last-acted' });
    expect(claimAt(l.agents.get('a'), 400)).toEqual({ taskId: 'T-2', token: 2, how: 'held' });
    // A claim the ledger never saw granted (a board from before it): held from its grant, as the engine passes it.
    expect(claimAt(undefined, 50, [{ taskId: 'T-9', token: 9, from: 40, to: null }])).toEqual({ taskId: 'T-9', token: 9, how: 'held' });
  });

  it('keeps at most its bounds: spans, switches and ids per agent, and agents (the least recently heard of goes)', () => {
    const events: BoardEvent[] = [];
    for (let i = 0; i < LedgerBounds.spans + 5; i++) events.push(grant('a', `T-${i + 1}`, i + 1, i * 10), ended('a', `T-${i + 1}`, i + 1, i * 10 + 5));
    const turns = Array.from({ length: LedgerBounds.seen + 3 }, (_, i) => ({ id: `m${i}`, cliAt: null, model: null, tokens: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, usd: null }));
    events.push(ev({ kind: 'usage', agentId: 'a', profile: 'shell', source: 'report', turns, taskId: null, token: null, how: 'overhead' }, 5000));
    let l = fold(events);
    const a = l.agents.get('a');
    expect(a?.spans.length).toBe(LedgerBounds.spans);
    expect(a?.spans[0]?.taskId).toBe('T-6');
    expect(a?.seen.length).toBe(LedgerBounds.seen);
    expect(a?.seen.at(-1)).toBe(turnDigest(`m${LedgerBounds.seen + 2}`));
    for (let i = 0; i < LedgerBounds.agents; i++) l = foldUsageLedger(l, grant(`agent-${i}`, 'T-1', 1000 + i, 10_000 + i));
    expect(l.agents.size).toBe(LedgerBounds.agents);
    expect(l.agents.get('a')).toBeUndefined();
    expect(l.agents.get('agent-0')).toBeDefined();
  });

  it('forgets the same agent after a snapshot and back (the order heard of is kept), and a copy is its own', () => {
    let l = fold([grant('a', 'T-1', 1, 10), grant('b', 'T-2', 2, 20), grant('c', 'T-3', 3, 30), grant('a', 'T-4', 4, 40)]);
    expect([...l.agents.keys()]).toEqual(['b', 'c', 'a']);
    const back = deserializeLedger(JSON.parse(JSON.stringify(serializeLedger(l))));
    expect([...back.agents.keys()]).toEqual(['b', 'c', 'a']);
    expect(back.agents.get('a')).toEqual(l.agents.get('a'));
    const copy = copyLedger(l);
    l = foldUsageLedger(l, ended('b', 'T-2', 2, 50));
    expect(l.agents.get('b')?.spans[0]?.to).toBe(50);
    expect(copy.agents.get('b')?.spans[0]?.to).toBeNull();
    expect([...copy.agents.keys()]).toEqual(['b', 'c', 'a']);
  });

  it('digests ids short and apart', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `/home/u/.claude/projects/x/session.jsonl:${i * 317}`);
    const d = new Set(ids.map(turnDigest));
    expect(d.size).toBe(ids.length);
    expect(Math.max(...[...d].map((x) => x.length))).toBeLessThanOrEqual(11);
  });
});
