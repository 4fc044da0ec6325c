import { describe, expect, it } from 'vitest';
import { applyEvent, emptyBoard, type Board } from '../../../src-shared/board/reducer.js';
import type { BoardEventBody } from '../../../src-shared/board/events.js';
import { EVIDENCE_CLAIMS, gapHistogram, LAPSES_REMEMBERED, leaseFor, profileOfAgent, suggestLease } from '../../../src-shared/board/leaseEvidence.js';

const S = 1000;

describe('the suggested lease', () => {
  it("says the issue's example: a longest gap of 97 s and 2 live claims reclaimed at 120 s suggest 180 s", () => {
    const gaps = [40, 97, 60].map((g) => g * S);
    const s = suggestLease('claude', 'Claude Code', { gaps: [...gaps, ...Array(47).fill(30 * S)], lapses: [120 * S, 120 * S, 120 * S], reclaimed: [120 * S, 120 * S] }, 120 * S);
    expect(s?.text).toBe("Claude Code's longest quiet gap in the last 50 claims was 97 s; 2 live claims were reclaimed at 120 s: suggest 180 s");
    expect(s?.suggestedMs).toBe(180 * S);
  });

  it('rounds half again the longest gap up to a half-minute, and shortens only on enough evidence and no reclaims', () => {
    const ev = (gaps: number[], reclaimed: number[] = []) => ({ gaps: gaps.map((g) => g * S), lapses: [], reclaimed: reclaimed.map((r) => r * S) });
    expect(suggestLease('codex', 'Codex', ev([90]), 120 * S)?.suggestedMs).toBe(150 * S);
    expect(suggestLease('codex', 'Codex', ev([100]), 120 * S)?.suggestedMs).toBe(150 * S);
    expect(suggestLease('codex', 'Codex', ev([101]), 120 * S)?.suggestedMs).toBe(180 * S);
    // Nine quiet claims say too little to shorten; ten do.
    expect(suggestLease('codex', 'Codex', ev(Array(9).fill(20)), 120 * S)?.text).toBe("Codex's longest quiet gap in the last 9 claims was 20 s: keep 120 s");
    expect(suggestLease('codex', 'Codex', ev(Array(10).fill(20)), 120 * S)?.suggestedMs).toBe(30 * S);
    // A reclaim at an older, shorter lease never argues for going back below the current one.
    expect(suggestLease('codex', 'Codex', ev(Array(10).fill(20), [60]), 240 * S)?.suggestedMs).toBe(240 * S);
    expect(suggestLease('codex', 'Codex', undefined, 120 * S)).toBeNull();
    expect(suggestLease('codex', 'Codex', ev([]), 120 * S)).toBeNull();
  });

  it('buckets quiet gaps at the check rhythm and the default lease', () => {
    expect(gapHistogram([0, 29_999, 30_000, 90_000, 119_999, 120_000, 300_000, 9e9]).map((b) => b.count)).toEqual([2, 1, 0, 2, 1, 0, 2]);
  });
});

describe('the evidence the reducer keeps', () => {
  const agent = 'claude-1-0123456789ab';
  let mono = 0;
  const apply = (b: Board, body: BoardEventBody) => applyEvent(b, { ...body, seq: b.seq + 1, at: 0, mono: mono++ } as never);

  it("reads a profile from the host's agent ids only, and gives a claim its profile's lease", () => {
    expect(profileOfAgent(agent)).toBe('claude');
    expect(profileOfAgent('user')).toBeNull();
    expect(profileOfAgent('claude')).toBeNull();
    const settings = { leaseMs: 120 * S, leaseByProfile: { claude: 180 * S } };
    expect(leaseFor(settings, agent)).toBe(180 * S);
    expect(leaseFor(settings, 'codex-1-0123456789ab')).toBe(120 * S);
    expect(leaseFor(settings, 'toString')).toBe(120 * S);
  });

  it(`keeps the last ${EVIDENCE_CLAIMS} claims of a profile and the last ${LAPSES_REMEMBERED} lapses waiting for a write`, () => {
    const b = emptyBoard('t');
    const n = EVIDENCE_CLAIMS + 10;
    for (let i = 1; i <= n; i++) {
      const taskId = `T-${i}`;
      apply(b, { kind: 'task-added', taskId, title: 'x', body: '', verify: null, by: 'user' });
      apply(b, { kind: 'grant', taskId, agentId: agent, token: i, deadline: 1e9, by: agent });
      apply(b, { kind: 'renew', taskId, agentId: agent, token: i, deadline: 2e9, via: 'liveness', quietMs: i * S });
      apply(b, { kind: 'submitted', taskId, agentId: agent, token: i });
      apply(b, { kind: 'claim-ended', taskId, agentId: agent, token: i, reason: 'completed', to: 'review' });
      apply(b, { kind: 'approved', taskId, by: 'user' });
    }
    const gaps = b.evidence.profiles['claude']?.gaps ?? [];
    expect(gaps.length).toBe(EVIDENCE_CLAIMS);
    expect(gaps[0]).toBe(11 * S);
    expect(gaps.at(-1)).toBe(n * S);
    // What a review waited to add is the task's until approval, then gone: no list grows with the board.
    expect([...b.tasks.values()].filter((t) => t.submittedQuiet)).toEqual([]);
    expect(JSON.stringify(b.evidence).length).toBeLessThan(2_000);
    for (let i = 1; i <= LAPSES_REMEMBERED + 5; i++) {
      const taskId = `T-${n + i}`;
      apply(b, { kind: 'task-added', taskId, title: 'x', body: '', verify: null, by: 'user' });
      apply(b, { kind: 'grant', taskId, agentId: agent, token: n + i, deadline: 1e9, by: agent });
      apply(b, { kind: 'claim-ended', taskId, agentId: agent, token: n + i, reason: 'lapsed', to: 'open' });
    }
    expect(b.evidence.lapsed.length).toBe(LAPSES_REMEMBERED);
    expect(b.evidence.profiles['claude']?.lapses.length).toBe(EVIDENCE_CLAIMS);
  });

  it('a submission changes nothing of the evidence itself: 5,000 tasks in review cost it nothing (it once copied a map per submission)', () => {
    const b = emptyBoard('t');
    for (let i = 1; i <= 5_000; i++) {
      const taskId = `T-${i}`;
      apply(b, { kind: 'task-added', taskId, title: 'x', body: '', verify: null, by: 'user' });
      apply(b, { kind: 'grant', taskId, agentId: agent, token: i, deadline: 1e9, by: agent });
    }
    const before = b.evidence;
    for (let i = 1; i <= 5_000; i++) apply(b, { kind: 'submitted', taskId: `T-${i}`, agentId: agent, token: i });
    expect(b.evidence).toBe(before);
    expect(b.tasks.get('T-5000')?.submittedQuiet).toEqual({ profile: 'claude', quietMs: 0 });
  });

  it('counts a lapsed claim reclaimed once, by a refused write under its token or one the fence called lapsed, and nothing else', () => {
    const b = emptyBoard('t');
    const other = 'codex-1-0123456789ab';
    apply(b, { kind: 'task-added', taskId: 'T-1', title: 'x', body: '', verify: null, by: 'user' });
    apply(b, { kind: 'grant', taskId: 'T-1', agentId: agent, token: 1, deadline: 1e9, by: agent });
    apply(b, { kind: 'claim-ended', taskId: 'T-1', agentId: agent, token: 1, reason: 'lapsed', to: 'open' });
    const refused = (over: object) => apply(b, { kind: 'write-rejected', taskId: 'T-1', agentId: agent, token: 1, op: 'fence', code: 'not-holder', message: '', ...over } as BoardEventBody);
    // Not evidence: a quota refusal, another agent, another token, a token-less write the fence did not call lapsed.
    refused({ code: 'rate-limited' });
    refused({ agentId: other });
    refused({ token: 2 });
    refused({ token: null, code: 'not-holder' });
    expect(b.evidence.profiles['claude']?.reclaimed).toEqual([]);
    // The task moved on to another agent and ended there: the fence says not-holder, under the lapsed token.
    refused({});
    refused({});
    expect(b.evidence.profiles['claude']?.reclaimed).toEqual([120 * S]);
    expect(b.evidence.lapsed).toEqual([]);
  });

  it('counts a claim rejected in review and then approved by its later quiet, not a second time', () => {
    const b = emptyBoard('t');
    apply(b, { kind: 'task-added', taskId: 'T-1', title: 'x', body: '', verify: null, by: 'user' });
    apply(b, { kind: 'grant', taskId: 'T-1', agentId: agent, token: 1, deadline: 1e9, by: agent });
    apply(b, { kind: 'renew', taskId: 'T-1', agentId: agent, token: 1, deadline: 2e9, via: 'liveness', quietMs: 40 * S });
    apply(b, { kind: 'submitted', taskId: 'T-1', agentId: agent, token: 1 });
    // In review: its silence is the person's, not counted.
    apply(b, { kind: 'renew', taskId: 'T-1', agentId: agent, token: 1, deadline: 3e9, via: 'liveness', quietMs: 110 * S });
    apply(b, { kind: 'returned', taskId: 'T-1', by: 'user', reason: 'again', to: 'claimed' });
    apply(b, { kind: 'renew', taskId: 'T-1', agentId: agent, token: 1, deadline: 4e9, via: 'liveness', quietMs: 70 * S });
    apply(b, { kind: 'submitted', taskId: 'T-1', agentId: agent, token: 1 });
    apply(b, { kind: 'claim-ended', taskId: 'T-1', agentId: agent, token: 1, reason: 'completed', to: 'review' });
    apply(b, { kind: 'approved', taskId: 'T-1', by: 'user' });
    expect(b.evidence.profiles['claude']?.gaps).toEqual([70 * S]);
  });
});
