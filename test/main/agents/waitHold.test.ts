/**
 * The lease respects a person's turn: while an agent waits on a person (needs-input) the liveness check
 * renews its claim, up to the Thread's wait hold, after which the claim lapses with reason waited-too-long;
 * an agent that is merely stalled loses its claim at the lease, as before. A real board (journal on disk),
 * the real loop, on a fake clock: every round is run by hand at the renew interval.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { judgeWithWait, LivenessLoop, type LivenessStates, type LivenessSubject } from '../../../src-main/agents/liveness.js';
import { Agent, secretDigestOf } from '../../../src-main/agents/agent.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { type BoardService } from '../../../src-main/board/boardService.js';

const dirs: string[] = [];
const boards: BoardService[] = [];
afterEach(async () => {
  for (const b of boards.splice(0)) await b.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const record = (id: string): Agent => Agent.adopted({ id, name: id, profile: 'claude', secretDigest: secretDigestOf('s'), pid: 4242 }, 0);

async function setup(waitHoldMs?: number) {
  let t = 0;
  const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-waithold-'));
  dirs.push(dir);
  // One clock for the board and the loop: the board's deadlines and the loop's "last progress" agree.
  const board = await JournalBoard.open({ dir, threadId: 'waithold', goal: '', monotonic: () => t });
  boards.push(board);
  if (waitHoldMs !== undefined) await board.run((e) => e.setSettings({ waitHoldMs }));
  const waiting = new Map<string, number>(); // agent -> when it started waiting
  const states: LivenessStates = {
    waitingFor: (id) => (waiting.has(id) ? t - (waiting.get(id) as number) : null),
  };
  const subjects: LivenessSubject[] = [
    { agent: record('waiter'), lastOutputAt: 0, startedAt: 0 },
    { agent: record('stuck'), lastOutputAt: 0, startedAt: 0 },
  ];
  // Sleeping, no CPU used: neither agent makes any progress, ever.
  const loop = new LivenessLoop({ board, subjects: () => subjects, onStatus: () => undefined, now: () => t, states, readCpu: async () => ({ state: 'sleeping', cpuMs: 0, processes: 1 }) });
  await board.run((e) => e.addTask({ title: 'asks the person' }));
  await board.run((e) => e.addTask({ title: 'wedged' }));
  await board.run((e) => e.claim('waiter', 'T-1'));
  await board.run((e) => e.claim('stuck', 'T-2'));
  waiting.set('waiter', 0);
  const interval = board.state.settings.renewIntervalMs;
  /** Run the loop's rounds, one per renew interval, up to `until` ms. */
  const runTo = async (until: number) => {
    while (t + interval <= until) {
      t += interval;
      await loop.check();
      await board.apply((e) => e.sweep());
    }
  };
  const holder = (id: string) => board.state.tasks.get(id)?.claim?.agentId ?? null;
  const ended = (id: string) => board.state.tasks.get(id)?.lastClaim?.reason ?? null;
  return { board, runTo, holder, ended, waiting, now: () => t };
}

describe('the lease while an agent waits on a person', () => {
  it('a waiting agent holds its claim past the lease; a stalled one loses it at the lease', async () => {
    const s = await setup();
    const lease = s.board.state.settings.leaseMs;
    // Today's rule for the stalled one: renewed while its last progress is within a lease, then left to run
    // out, so its claim is gone by two leases after its last progress (0 here).
    await s.runTo(2 * lease);
    const lapse = (await s.board.log()).find((e) => e.kind === 'claim-ended' && e.taskId === 'T-2');
    expect(lapse?.mono).toBeLessThanOrEqual(2 * lease);
    expect(s.holder('T-2')).toBeNull();
    expect(s.ended('T-2')).toBe('lapsed');
    expect(s.holder('T-1')).toBe('waiter');
    // Renewed as a wait, so the log says why the lease moved without progress.
    const vias = (await s.board.log()).filter((e) => e.kind === 'renew' && e.taskId === 'T-1').map((e) => (e.kind === 'renew' ? e.via : ''));
    expect(vias.length).toBeGreaterThan(0);
    expect(new Set(vias)).toEqual(new Set(['waiting']));
  });

  it('keeps it up to the default wait hold (30 min), then the claim lapses with reason waited-too-long', async () => {
    const s = await setup();
    const hold = s.board.state.settings.waitHoldMs;
    expect(hold).toBe(30 * 60_000);
    await s.runTo(hold - 1);
    expect(s.holder('T-1')).toBe('waiter');
    await s.runTo(hold + s.board.state.settings.renewIntervalMs);
    expect(s.holder('T-1')).toBeNull();
    expect(s.ended('T-1')).toBe('waited-too-long');
    // Back in the backlog for someone who can work on it; not counted as a failed attempt.
    expect(s.board.state.tasks.get('T-1')).toMatchObject({ state: 'open', failures: 0 });
  });

  it('a shorter Thread setting ends the hold sooner', async () => {
    const s = await setup(5 * 60_000);
    await s.runTo(5 * 60_000 - 1);
    expect(s.holder('T-1')).toBe('waiter');
    await s.runTo(5 * 60_000 + 30_000);
    expect(s.ended('T-1')).toBe('waited-too-long');
  });

  it('an agent that stops waiting is judged on its progress again', async () => {
    const s = await setup();
    await s.runTo(60_000);
    s.waiting.delete('waiter');
    // No progress since 0 and no longer waiting: stalled, its claim runs out at its last renewed deadline.
    await s.runTo(60_000 + s.board.state.settings.leaseMs + 30_000);
    expect(s.ended('T-1')).toBe('lapsed');
  });
});

describe('judgeWithWait', () => {
  const base = { lastProgressAt: 0, now: 200_000, leaseMs: 120_000, waitHoldMs: 1_800_000 };
  it('holds a waiting live agent, ends the wait past the hold, and never holds a stopped or gone process', () => {
    expect(judgeWithWait({ ...base, state: 'sleeping', waitingMs: 1000 })).toBe('hold');
    expect(judgeWithWait({ ...base, state: 'sleeping', waitingMs: 1_800_000 })).toBe('waited-too-long');
    expect(judgeWithWait({ ...base, state: 'stopped', waitingMs: 1000 })).toBe('stalled');
    expect(judgeWithWait({ ...base, state: 'gone', waitingMs: 1000 })).toBe('gone');
    expect(judgeWithWait({ ...base, state: 'sleeping', waitingMs: null })).toBe('stalled');
  });
});
