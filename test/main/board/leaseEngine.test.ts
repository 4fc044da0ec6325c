import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { Limits } from '../../../src-shared/board/limits.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import { firstIssue, REJECT_REASON_MISSING } from '../../../src-shared/board/schemas.js';
import { windowMethods } from '../../../src-shared/protocol/windowApi.js';

const LEASE = Limits.defaultLeaseMs;

function setup(tasks = 1) {
  const clock = new ManualClock();
  const engine = new LeaseEngine(clock);
  const events: BoardEvent[] = [];
  engine.onEvent((e) => events.push(e));
  engine.createThread('th-1', 'ship it');
  for (let i = 0; i < tasks; i++) engine.addTask({ title: `task ${i + 1}` });
  return { clock, engine, events, kinds: () => events.map((e) => e.kind) };
}

function mustClaim(engine: LeaseEngine, agent: string, task?: string) {
  const r = engine.claim(agent, task);
  if (!r.ok) throw new Error(`claim failed: ${r.error.code} ${r.error.message}`);
  return r.value;
}

describe('lease boundaries', () => {
  it('renews at deadline - 1 ms', () => {
    const { engine, clock } = setup();
    const c = mustClaim(engine, 'a', 'T-1');
    clock.advance(LEASE - 1);
    const r = engine.renew('a', 'T-1', c.token);
    expect(r.ok).toBe(true);
    expect(engine.task('T-1')?.claim?.deadline).toBe(LEASE - 1 + LEASE);
  });

  it('refuses a renewal exactly at the deadline: a lapsed lease stays lapsed', () => {
    const { engine, clock, events } = setup();
    const c = mustClaim(engine, 'a', 'T-1');
    clock.advance(LEASE);
    const r = engine.renew('a', 'T-1', c.token);
    expect(r).toMatchObject({ ok: false, error: { code: 'lapsed' } });
    expect(engine.task('T-1')?.state).toBe('open');
    expect(events.filter((e) => e.kind === 'claim-ended')).toMatchObject([{ reason: 'lapsed', token: c.token }]);
    expect(events.at(-1)).toMatchObject({ kind: 'write-rejected', code: 'lapsed', op: 'renew' });
  });

  it('refuses a renewal at deadline + 1 ms', () => {
    const { engine, clock } = setup();
    const c = mustClaim(engine, 'a', 'T-1');
    clock.advance(LEASE + 1);
    expect(engine.renew('a', 'T-1', c.token)).toMatchObject({ ok: false, error: { code: 'lapsed' } });
    // and stays lapsed: a later renewal fails the same way
    expect(engine.renew('a', 'T-1')).toMatchObject({ ok: false, error: { code: 'lapsed' } });
  });

  it('a sweep just before the deadline frees nothing; at the deadline it frees the claim', () => {
    const { engine, clock } = setup();
    mustClaim(engine, 'a', 'T-1');
    clock.advance(LEASE - 1);
    expect(engine.sweep()).toEqual([]);
    clock.advance(1);
    expect(engine.sweep()).toEqual(['T-1']);
    expect(engine.nextDeadline()).toBeNull();
  });

  it('any accepted write renews, and a renewal never shortens a lease', () => {
    const { engine, clock } = setup();
    const c = mustClaim(engine, 'a', 'T-1');
    clock.advance(1000);
    expect(engine.note('a', 'T-1', 'working on it', c.token).ok).toBe(true);
    expect(engine.task('T-1')?.claim?.deadline).toBe(1000 + LEASE);
    expect(engine.setSettings({ leaseMs: 5_000 }).ok).toBe(true);
    expect(engine.renew('a', 'T-1', c.token).ok).toBe(true);
    expect(engine.task('T-1')?.claim?.deadline).toBe(1000 + LEASE);
  });

  it('moving the wall clock by hours changes no decision', () => {
    const { engine, clock } = setup();
    const c = mustClaim(engine, 'a', 'T-1');
    clock.jumpWall(6 * 3600_000);
    expect(engine.sweep()).toEqual([]);
    expect(engine.renew('a', 'T-1', c.token).ok).toBe(true);
    clock.jumpWall(-12 * 3600_000);
    expect(engine.sweep()).toEqual([]);
    expect(engine.task('T-1')?.claim?.deadline).toBe(LEASE);
  });
});

describe('fencing', () => {
  it('tokens strictly increase on every grant, including a re-claim by the same agent', () => {
    const { engine } = setup(2);
    const a1 = mustClaim(engine, 'a', 'T-1');
    expect(engine.release('a', 'T-1', a1.token).ok).toBe(true);
    const a2 = mustClaim(engine, 'a', 'T-1');
    const b1 = mustClaim(engine, 'b', 'T-2');
    expect(a2.token).toBeGreaterThan(a1.token);
    expect(b1.token).toBeGreaterThan(a2.token);
  });

  it('rejects the ABA write: A claims, lapses, B claims and releases, A claims again; A’s first-claim write fails', () => {
    const { engine, clock } = setup();
    const first = mustClaim(engine, 'a', 'T-1');
    clock.advance(LEASE);
    const b = mustClaim(engine, 'b', 'T-1');
    expect(engine.release('b', 'T-1', b.token).ok).toBe(true);
    const again = mustClaim(engine, 'a', 'T-1');
    const before = engine.task('T-1');
    const r = engine.note('a', 'T-1', 'late write from the first claim', first.token);
    expect(r).toMatchObject({ ok: false, error: { code: 'stale-token' } });
    expect(engine.task('T-1')?.notes).toEqual(before?.notes);
    expect(engine.note('a', 'T-1', 'current write', again.token).ok).toBe(true);
  });

  it('a woken agent that lapsed is told lapsed, and the new holder is untouched', () => {
    const { engine, clock } = setup();
    const a = mustClaim(engine, 'a', 'T-1');
    clock.advance(LEASE + 5);
    const b = mustClaim(engine, 'b', 'T-1');
    expect(engine.done('a', 'T-1', a.token)).toMatchObject({ ok: false, error: { code: 'lapsed' } });
    expect(engine.task('T-1')).toMatchObject({ state: 'claimed', claim: { agentId: 'b', token: b.token } });
  });

  it('release by a non-holder changes nothing and is recorded', () => {
    const { engine, events } = setup();
    const a = mustClaim(engine, 'a', 'T-1');
    const before = engine.task('T-1');
    expect(engine.release('b', 'T-1', a.token)).toMatchObject({ ok: false, error: { code: 'not-holder' } });
    expect(engine.release('b', 'T-1')).toMatchObject({ ok: false, error: { code: 'not-holder' } });
    expect(engine.task('T-1')).toBe(before);
    expect(events.filter((e) => e.kind === 'write-rejected')).toHaveLength(2);
  });

  it('unknown task and garbage ids are typed rejections', () => {
    const { engine } = setup();
    expect(engine.claim('a', 'T-99')).toMatchObject({ ok: false, error: { code: 'no-such-task' } });
    expect(engine.note('a', 'nonsense', 'x')).toMatchObject({ ok: false, error: { code: 'no-such-task' } });
    // garbage tokens and agent ids never reach the engine: the edges refuse them (test/main/thread/boardEdge.test.ts)
  });

  it('claim with no id takes the lowest-numbered open task', () => {
    const { engine } = setup(3);
    expect(mustClaim(engine, 'a').taskId).toBe('T-1');
    expect(mustClaim(engine, 'b').taskId).toBe('T-2');
    expect(engine.release('a', 'T-1').ok).toBe(true);
    expect(mustClaim(engine, 'c').taskId).toBe('T-1');
    expect(mustClaim(engine, 'd').taskId).toBe('T-3');
    expect(engine.claim('e')).toMatchObject({ ok: false, error: { code: 'no-such-task' } });
  });
});

describe('user actions and host signals', () => {
  it('reassign revokes the old claim and grants a new token in one step', () => {
    const { engine, events } = setup();
    const a = mustClaim(engine, 'a', 'T-1');
    const r = engine.assign('T-1', 'b');
    expect(r.ok).toBe(true);
    const claim = engine.task('T-1')?.claim;
    expect(claim?.agentId).toBe('b');
    expect(claim?.token).toBeGreaterThan(a.token);
    expect(events.filter((e) => e.kind === 'reassign')).toHaveLength(1);
    expect(engine.note('a', 'T-1', 'mine?', a.token)).toMatchObject({ ok: false, error: { code: 'stale-token' } });
    expect(engine.note('b', 'T-1', 'mine', claim?.token).ok).toBe(true);
    expect(engine.claimsOf('a')).toEqual([]);
    expect(engine.claimsOf('b')).toEqual(['T-1']);
  });

  it('a user release returns the task to open', () => {
    const { engine } = setup();
    mustClaim(engine, 'a', 'T-1');
    expect(engine.userRelease('T-1').ok).toBe(true);
    expect(engine.task('T-1')).toMatchObject({ state: 'open', claim: null, lastClaim: { reason: 'user-released' } });
    expect(engine.userRelease('T-1')).toMatchObject({ ok: false, error: { code: 'bad-state' } });
  });

  it('releaseAllHeldBy frees every claim at once with the reason, no timer involved', () => {
    const { engine, events } = setup(3);
    mustClaim(engine, 'a', 'T-1');
    mustClaim(engine, 'a', 'T-2');
    mustClaim(engine, 'b', 'T-3');
    expect(engine.releaseAllHeldBy('a', 'process-exited').sort()).toEqual(['T-1', 'T-2']);
    const ended = events.filter((e) => e.kind === 'claim-ended');
    expect(ended.map((e) => e.kind === 'claim-ended' && e.reason)).toEqual(['process-exited', 'process-exited']);
    expect(engine.task('T-3')?.claim?.agentId).toBe('b');
  });

  it('renewLive renews a live agent’s claims but does not revive a lapsed one', () => {
    const { engine, clock } = setup(2);
    mustClaim(engine, 'a', 'T-1');
    clock.advance(10_000);
    mustClaim(engine, 'a', 'T-2');
    clock.advance(LEASE - 10_000); // T-1 lapses exactly now
    expect(engine.renewLive('a')).toBe(1);
    expect(engine.task('T-1')?.state).toBe('open');
    expect(engine.task('T-2')?.claim?.deadline).toBe(LEASE + LEASE);
  });

  it('poison limit: the third lapse parks the task in needs-attention; a person resets it', () => {
    const { engine, clock } = setup();
    for (let i = 0; i < 3; i++) {
      mustClaim(engine, `a${i}`, 'T-1');
      clock.advance(LEASE);
      engine.sweep();
    }
    expect(engine.task('T-1')).toMatchObject({ state: 'needs-attention', failures: 3, attempts: 3 });
    expect(engine.claim('z', 'T-1')).toMatchObject({ ok: false, error: { code: 'bad-state' } });
    expect(engine.reset('T-1').ok).toBe(true);
    expect(engine.task('T-1')).toMatchObject({ state: 'open', failures: 0 });
  });

  it('grace after a restart: live holders get a full lease, gone ones are released with host-restarted', () => {
    const { engine, clock, events } = setup(2);
    mustClaim(engine, 'alive', 'T-1');
    mustClaim(engine, 'gone', 'T-2');
    clock.advance(LEASE - 10);
    expect(engine.grace((id) => id === 'alive')).toEqual({ extended: 1, released: 1 });
    expect(engine.task('T-1')?.claim?.deadline).toBe(LEASE - 10 + LEASE);
    expect(events.find((e) => e.kind === 'claim-ended')).toMatchObject({ taskId: 'T-2', reason: 'host-restarted' });
  });

  it('done is a claim: review, then approve → done or reject → back to the holder', () => {
    const { engine, clock } = setup(2);
    const a = mustClaim(engine, 'a', 'T-1');
    expect(engine.done('a', 'T-1', a.token, 'tests pass').ok).toBe(true);
    expect(engine.task('T-1')?.state).toBe('review');
    expect(engine.done('a', 'T-1', a.token)).toMatchObject({ ok: false, error: { code: 'bad-state' } });
    expect(engine.rejectReview('T-1', 'lint fails').ok).toBe(true);
    expect(engine.task('T-1')).toMatchObject({ state: 'claimed', claim: { agentId: 'a', token: a.token } });
    expect(engine.done('a', 'T-1', a.token).ok).toBe(true);
    expect(engine.approve('T-1').ok).toBe(true);
    expect(engine.task('T-1')).toMatchObject({ state: 'done', claim: null });
    // review is the person's time (issue 44): the claim is held however long the person takes, and a
    // rejection gives it back to its holder with a full lease from then, not what was left of the old one
    const b = mustClaim(engine, 'b', 'T-2');
    expect(engine.done('b', 'T-2', b.token).ok).toBe(true);
    clock.advance(3 * LEASE);
    expect(engine.sweep()).toEqual([]);
    expect(engine.task('T-2')).toMatchObject({ state: 'review', claim: { agentId: 'b', token: b.token } });
    expect(engine.rejectReview('T-2', 'nope').ok).toBe(true);
    expect(engine.task('T-2')).toMatchObject({ state: 'claimed', claim: { agentId: 'b', token: b.token, deadline: clock.now() + LEASE } });
    // and from then it counts down again, as any claim does
    clock.advance(LEASE);
    expect(engine.sweep()).toEqual(['T-2']);
    expect(engine.task('T-2')).toMatchObject({ state: 'open', claim: null, lastClaim: { agentId: 'b', reason: 'lapsed' } });
  });

  it('a claim in review is still ended by a hard signal, and a reject then sends the task to the backlog', () => {
    const { engine, clock } = setup(1);
    const a = mustClaim(engine, 'a', 'T-1');
    expect(engine.done('a', 'T-1', a.token).ok).toBe(true);
    clock.advance(2 * LEASE);
    // the holder's own writes are still accepted while the person has not looked
    expect(engine.note('a', 'T-1', 'still here', a.token).ok).toBe(true);
    expect(engine.releaseAllHeldBy('a', 'pane-closed')).toEqual(['T-1']);
    expect(engine.task('T-1')).toMatchObject({ state: 'review', claim: null });
    expect(engine.rejectReview('T-1', 'nope').ok).toBe(true);
    expect(engine.task('T-1')).toMatchObject({ state: 'open', claim: null });
  });

  it('an agent waiting on a person too long loses the claims it works on, not its work in review', () => {
    const { engine } = setup(2);
    const a = mustClaim(engine, 'a', 'T-1');
    mustClaim(engine, 'a', 'T-2');
    expect(engine.done('a', 'T-1', a.token).ok).toBe(true);
    expect(engine.endWaited('a')).toEqual(['T-2']);
    expect(engine.task('T-1')).toMatchObject({ state: 'review', claim: { agentId: 'a' } });
  });

  it('a reject needs a reason: an empty or blank one is refused, in the schema and by the board, and the task stays in review', () => {
    const { engine, events } = setup(1);
    const a = mustClaim(engine, 'a', 'T-1');
    expect(engine.done('a', 'T-1', a.token).ok).toBe(true);
    const before = events.length;
    for (const blank of ['', '   ', '\n\t ']) {
      expect(engine.rejectReview('T-1', blank)).toEqual({ ok: false, error: { code: 'invalid-input', message: REJECT_REASON_MISSING } });
      // The one protocol definition refuses it too, before any host is reached (window, WebSocket).
      const parsed = windowMethods['task.reject'].input.safeParse({ key: '0123456789abcdef', taskId: 'T-1', reason: blank });
      expect(parsed.success).toBe(false);
      expect(firstIssue(parsed.error!)).toContain('a reject needs a reason');
    }
    expect(events.length).toBe(before);
    expect(engine.task('T-1')).toMatchObject({ state: 'review', claim: { agentId: 'a' } });
    expect(windowMethods['task.reject'].input.safeParse({ key: '0123456789abcdef', taskId: 'T-1', reason: 'tests fail' }).success).toBe(true);
    expect(engine.rejectReview('T-1', ' tests fail ').ok).toBe(true);
    expect(events.filter((e) => e.kind === 'note').map((e) => (e as { text: string }).text)).toContain('Review:  tests fail ');
  });

  it('blocked ⇄ open, and invalid transitions are typed errors', () => {
    const { engine } = setup(2);
    expect(engine.block('T-1', 'waiting on API keys').ok).toBe(true);
    expect(engine.claim('a', 'T-1')).toMatchObject({ ok: false, error: { code: 'bad-state' } });
    expect(engine.unblock('T-1').ok).toBe(true);
    expect(engine.approve('T-1')).toMatchObject({ ok: false, error: { code: 'bad-state' } });
    expect(engine.unblock('T-2')).toMatchObject({ ok: false, error: { code: 'bad-state' } });
    mustClaim(engine, 'a', 'T-2');
    expect(engine.block('T-2', 'x')).toMatchObject({ ok: false, error: { code: 'bad-state' } });
  });
});

describe('rewinding to the board the journal has (a write that could not be saved)', () => {
  it('the unsaved claim, note and task are gone from reads and from every index: the claim no longer lapses, its task is claimable', () => {
    const { clock, engine } = setup(3);
    const a = mustClaim(engine, 'a', 'T-1');
    // What the journal has: the board so far (tasks are never edited in place, so a shallow copy holds).
    const saved = { ...engine.state, tasks: new Map(engine.state.tasks) };
    const b = mustClaim(engine, 'b', 'T-2');
    engine.note('a', 'T-1', 'unsaved', a.token);
    engine.addTask({ title: 'unsaved task' });
    engine.rewind(saved);
    expect(engine.state.tasks.size).toBe(3);
    expect(engine.task('T-1')?.notes).toEqual([]);
    expect(engine.task('T-2')?.claim).toBeNull();
    expect(engine.claimsOf('b')).toEqual([]);
    expect(engine.claimsOf('a')).toEqual(['T-1']);
    expect(engine.nextDeadline()).toBe(engine.task('T-1')?.claim?.deadline);
    expect(engine.nextDeadline()).toBe(LEASE);
    // "Claim the next open task" finds T-2 again; a's claim still lapses on time.
    expect(mustClaim(engine, 'c').taskId).toBe('T-2');
    clock.advance(LEASE);
    expect(engine.sweep()).toEqual(expect.arrayContaining(['T-1']));
    expect(b.token).toBeGreaterThan(a.token);
  });
});

describe('the claim limit (issue 42: one agent claimed all 23 ready tasks in a loop)', () => {
  it('refuses an agent its claim past the Thread limit, naming its tasks and the limit; others still claim', () => {
    const { engine, events } = setup(5);
    expect(engine.state.settings.claimLimit).toBe(Limits.defaultClaimLimit);
    for (let i = 0; i < Limits.defaultClaimLimit; i++) mustClaim(engine, 'a');
    const r = engine.claim('a');
    expect(r).toMatchObject({ ok: false, error: { code: 'claim-limit' } });
    expect(!r.ok && r.error.message).toMatch(/a holds 3 claimed tasks \(T-1, T-2, T-3\).*at most 3/);
    expect(engine.claim('a', 'T-5')).toMatchObject({ ok: false, error: { code: 'claim-limit' } });
    // the refusal is on the board's log like any refused write, and nothing was granted
    expect(events.at(-1)).toMatchObject({ kind: 'write-rejected', agentId: 'a', op: 'claim', code: 'claim-limit' });
    expect(engine.task('T-4')?.state).toBe('open');
    expect(mustClaim(engine, 'b').taskId).toBe('T-4');
  });

  it('counts claimed tasks only: one in review or released frees a place', () => {
    const { engine } = setup(4);
    const held = [mustClaim(engine, 'a'), mustClaim(engine, 'a'), mustClaim(engine, 'a')];
    expect(engine.claim('a').ok).toBe(false);
    expect(engine.done('a', 'T-1', held[0]!.token).ok).toBe(true);
    expect(mustClaim(engine, 'a').taskId).toBe('T-4');
    expect(engine.claim('a').ok).toBe(false);
    expect(engine.release('a', 'T-2', held[1]!.token).ok).toBe(true);
    expect(mustClaim(engine, 'a').taskId).toBe('T-2');
  });

  it('a person may assign past it; the Thread setting moves it, within its bounds', () => {
    const { engine } = setup(5);
    for (let i = 0; i < 3; i++) mustClaim(engine, 'a');
    expect(engine.assign('T-4', 'a').ok).toBe(true);
    expect(engine.claimsOf('a')).toHaveLength(4);
    expect(engine.setSettings({ claimLimit: 5 }).ok).toBe(true);
    expect(mustClaim(engine, 'a').taskId).toBe('T-5');
    const limit = windowMethods['board.setSettings'].input.shape.patch;
    expect(limit.safeParse({ claimLimit: 0 }).success).toBe(false);
    expect(limit.safeParse({ claimLimit: Limits.maxClaimLimit + 1 }).success).toBe(false);
    expect(limit.safeParse({ claimLimit: 1 }).success).toBe(true);
  });
});
