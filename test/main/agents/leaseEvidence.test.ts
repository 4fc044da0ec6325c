/**
 * A lease length chosen from evidence (issue 34, item 5). A real board (journal on disk), the real liveness
 * loop, on a fake clock, with two scripted agents: Claude Code works in bursts with quiet gaps of 90 s and
 * finishes its tasks; Codex goes quiet past its lease, its claim lapses while its process is alive, and it
 * commits or notes afterwards (refused by the fence: a live claim reclaimed). The board's evidence, its
 * histogram and its suggestion come out exactly; the evidence is the same after a restart (from snapshot and
 * journal); and a person's per-profile lease is what the engine and the loop then use.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LivenessLoop, type LivenessSubject } from '../../../src-main/agents/liveness.js';
import { Agent, secretDigestOf } from '../../../src-main/agents/agent.js';
import { PROFILES } from '../../../src-main/agents/profiles.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import type { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import { gapHistogram, leaseFor, suggestLease } from '../../../src-shared/board/leaseEvidence.js';
import type { Result } from '../../../src-shared/board/result.js';

const dirs: string[] = [];
const boards: JournalBoard[] = [];
afterEach(async () => {
  for (const b of boards.splice(0)) await b.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const CLAUDE = 'claude-1-0123456789ab';
const CODEX = 'codex-1-ba9876543210';
const S = 1000;

async function setup() {
  let t = 0;
  const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-evidence-'));
  dirs.push(dir);
  // A snapshot every 25 events: the evidence must come back from a snapshot, not only from a replay.
  const open = async () => {
    const b = await JournalBoard.open({ dir, threadId: 'evidence', goal: '', monotonic: () => t, compactEvery: 25 });
    boards.push(b);
    return b;
  };
  let board = await open();
  const agents = new Map<string, LivenessSubject & { lastOutputAt: number }>();
  for (const [id, profile] of [
    [CLAUDE, 'claude'],
    [CODEX, 'codex'],
  ] as const) {
    agents.set(id, { agent: Agent.adopted({ id, name: id, profile, secretDigest: secretDigestOf('s'), pid: 4242 }, 0), lastOutputAt: 0, startedAt: 0 });
  }
  // Sleeping, no CPU time used: an agent's only signs of progress are its pane's output and its board calls.
  const loop = () => new LivenessLoop({ board, subjects: () => agents.values(), onStatus: () => undefined, now: () => t, readCpu: async () => ({ state: 'sleeping', cpuMs: 0, processes: 1 }) });
  let liveness = loop();
  const interval = board.state.settings.renewIntervalMs;
  /** Run the loop's rounds, one per renew interval, up to `until` (ms since the start). */
  const runTo = async (until: number) => {
    while (t + interval <= until) {
      t += interval;
      await liveness.check();
      await board.apply((e) => e.sweep());
    }
  };
  /** The agent prints to its pane now. */
  const output = (id: string) => {
    (agents.get(id) as { lastOutputAt: number }).lastOutputAt = t;
  };
  /** The agent calls the board now (a board call is progress too). */
  const call = async <T>(id: string, op: (e: LeaseEngine) => Result<T>) => {
    agents.get(id)?.agent.calledBoard(t);
    return board.run(op);
  };
  const reopen = async () => {
    liveness.stop();
    await board.close();
    boards.splice(boards.indexOf(board), 1);
    board = await open();
    liveness = loop();
  };
  return { get board() { return board; }, runTo, output, call, reopen, now: () => t };
}

/** Everything the window draws of one profile: the histogram's counts and the suggestion's sentence. */
function shown(board: JournalBoard, profile: 'claude' | 'codex') {
  const ev = board.state.evidence.profiles[profile];
  const current = leaseFor(board.state.settings, `${profile}-1-000000000000`);
  return {
    buckets: gapHistogram(ev?.gaps ?? []).map((b) => b.count),
    lapses: ev?.lapses.length ?? 0,
    reclaimed: ev?.reclaimed.length ?? 0,
    suggestion: suggestLease(profile, PROFILES[profile].label, ev, current),
  };
}

describe('lease evidence from scripted agents on a fake clock', () => {
  it('keeps the quiet gaps of claims that ended well and the live claims reclaimed, and suggests a lease per profile', async () => {
    const s = await setup();
    const lease = s.board.state.settings.leaseMs;
    expect(lease).toBe(120 * S);

    // Claude Code: three tasks, each worked in two bursts with a 90 s silence between, said done and approved.
    for (let i = 0; i < 3; i++) {
      const t0 = s.now();
      const task = await s.call(CLAUDE, (e) => e.addTask({ title: `claude task ${i}` }, CLAUDE));
      const id = task.ok ? task.value.id : '';
      await s.call(CLAUDE, (e) => e.claim(CLAUDE, id));
      s.output(CLAUDE);
      await s.runTo(t0 + 90 * S); // checks at 30, 60, 90 s of silence: each renews (inside the 120 s lease)
      s.output(CLAUDE);
      await s.runTo(t0 + 120 * S);
      expect((await s.call(CLAUDE, (e) => e.done(CLAUDE, id))).ok).toBe(true);
      await s.runTo(t0 + 180 * S); // in review: its silence now is waiting for a person, not a quiet gap
      expect((await s.board.run((e) => e.approve(id))).ok).toBe(true);
    }

    // Codex: three tasks, each claimed, then 150 s of silence: the check stops renewing at 120 s of it, and
    // the lease lapses 120 s after the last renewal. Its process is alive all along: twice it comes back and
    // writes (a commit through the fence with its token, a note without one); the third time it never does.
    const writesAfterLapse = [
      (id: string, token: number) => (e: LeaseEngine) => e.fence(CODEX, id, token),
      (id: string) => (e: LeaseEngine) => e.note(CODEX, id, 'back from the long build'),
      null,
    ];
    for (const write of writesAfterLapse) {
      const t0 = s.now();
      const task = await s.board.run((e) => e.addTask({ title: 'codex task' }));
      const id = task.ok ? task.value.id : '';
      const claim = await s.call(CODEX, (e) => e.claim(CODEX, id));
      const token = claim.ok ? claim.value.token : 0;
      s.output(CODEX);
      await s.runTo(t0 + 240 * S);
      expect(s.board.state.tasks.get(id)?.lastClaim).toMatchObject({ agentId: CODEX, reason: 'lapsed' });
      if (write) {
        const refused = await s.call(CODEX, write(id, token));
        expect(refused.ok ? null : refused.error.code).toBe('lapsed');
      }
      // The person hands it to Claude Code, which finishes it quickly (no silence at all).
      const t1 = s.now();
      await s.board.run((e) => e.assign(id, CLAUDE));
      s.output(CLAUDE);
      await s.runTo(t1 + 30 * S);
      s.output(CLAUDE);
      await s.call(CLAUDE, (e) => e.done(CLAUDE, id));
      await s.board.run((e) => e.approve(id));
    }

    const expected = {
      claude: {
        // Buckets: <30 s, 30-60, 60-90, 90-120, 120-180, 180-300, 300 s and over. Its own three tasks went
        // quiet for 90 s; the three handed over, for the 30 s between their two outputs.
        buckets: [0, 3, 0, 3, 0, 0, 0],
        lapses: 0,
        reclaimed: 0,
        text: "Claude Code's longest quiet gap in the last 6 claims was 90 s: suggest 150 s",
        suggestedMs: 150 * S,
      },
      codex: {
        buckets: [0, 0, 0, 0, 0, 0, 0],
        lapses: 3,
        reclaimed: 2,
        text: 'no claim of Codex CLI has ended well yet; 2 live claims were reclaimed at 120 s: suggest 180 s',
        suggestedMs: 180 * S,
      },
    };
    const check = (b: JournalBoard) => {
      for (const profile of ['claude', 'codex'] as const) {
        const got = shown(b, profile);
        const want = expected[profile];
        expect({ buckets: got.buckets, lapses: got.lapses, reclaimed: got.reclaimed, text: got.suggestion?.text, suggestedMs: got.suggestion?.suggestedMs }).toEqual(want);
      }
    };
    check(s.board);

    // The same after a restart: the evidence is the board's, from its snapshot and journal.
    const before = JSON.stringify(s.board.state.evidence);
    await s.reopen();
    expect(JSON.stringify(s.board.state.evidence)).toBe(before);
    check(s.board);

    // Nothing changed the lease by itself.
    expect(s.board.state.settings.leaseMs).toBe(120 * S);
    expect(s.board.state.settings.leaseByProfile).toEqual({});
  });

  it("applies a profile's lease a person set: to its grants, renewals and the liveness check, the Thread's to the others", async () => {
    const s = await setup();
    expect((await s.board.run((e) => e.setSettings({ leaseByProfile: { codex: 180 * S } }))).ok).toBe(true);
    await s.board.run((e) => e.addTask({ title: 'a' }));
    await s.board.run((e) => e.addTask({ title: 'b' }));
    const t0 = s.now();
    await s.call(CODEX, (e) => e.claim(CODEX, 'T-1'));
    await s.call(CLAUDE, (e) => e.claim(CLAUDE, 'T-2'));
    s.output(CODEX);
    s.output(CLAUDE);
    expect(s.board.state.tasks.get('T-1')?.claim?.deadline).toBe(t0 + 180 * S);
    expect(s.board.state.tasks.get('T-2')?.claim?.deadline).toBe(t0 + 120 * S);
    // 150 s of silence from both: Codex's 180 s lease keeps it renewed (last at 150 s of quiet); Claude Code's
    // 120 s lease stops its renewals at 120 s of quiet.
    await s.runTo(t0 + 150 * S);
    expect(s.board.state.tasks.get('T-1')?.claim?.deadline).toBe(t0 + 150 * S + 180 * S);
    expect(s.board.state.tasks.get('T-2')?.claim?.deadline).toBe(t0 + 90 * S + 120 * S);
    expect(s.board.state.tasks.get('T-1')?.claim?.quietMs).toBe(150 * S);
    await s.runTo(t0 + 210 * S);
    expect(s.board.state.tasks.get('T-2')?.claim).toBeNull();
    expect(s.board.state.tasks.get('T-1')?.claim?.agentId).toBe(CODEX);
    // A write renews to the profile's lease too.
    const renewed = await s.call(CODEX, (e) => e.renew(CODEX, 'T-1'));
    expect(renewed.ok && renewed.value.remainingMs).toBe(180 * S);
  });

  it('refuses a profile lease out of bounds or for a profile Forkbench does not launch, and loses nothing', async () => {
    const { SettingsPatchSchema } = await import('../../../src-shared/board/schemas.js');
    expect(SettingsPatchSchema.safeParse({ leaseByProfile: { claude: 180 * S } }).success).toBe(true);
    const short = SettingsPatchSchema.safeParse({ leaseByProfile: { claude: 500 } });
    expect(short.success).toBe(false);
    expect(short.error?.issues[0]?.message).toBe('lease must be at least 2000 ms');
    expect(SettingsPatchSchema.safeParse({ leaseByProfile: { claude: 13 * 60 * 60 * S } }).success).toBe(false);
    expect(SettingsPatchSchema.safeParse({ leaseByProfile: { robot: 180 * S } }).success).toBe(false);
    // A key a window could send to reach an object's prototype is no profile: dropped, nothing set.
    const proto = SettingsPatchSchema.safeParse(JSON.parse('{"leaseByProfile":{"__proto__":180000}}'));
    expect(Object.keys(proto.data?.leaseByProfile ?? { x: 1 })).toEqual([]);
    expect(Object.getPrototypeOf(proto.data?.leaseByProfile)).toBe(Object.prototype);
  });
});
