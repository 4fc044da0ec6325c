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
import { PROFILES } from '../../../src-main/agents/profiles.js';
import type { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { gapHistogram, leaseFor, suggestLease } from '../../../src-shared/board/leaseEvidence.js';
import { CLAUDE, CODEX, claudeQuietCodexReclaimed, leaseScript, type LeaseScript } from '../../helpers/leaseScript.js';

const dirs: string[] = [];
const scripts: LeaseScript[] = [];
afterEach(async () => {
  for (const s of scripts.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const S = 1000;

async function setup(): Promise<LeaseScript> {
  const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-evidence-'));
  dirs.push(dir);
  const s = await leaseScript(dir);
  scripts.push(s);
  return s;
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

    // Claude Code with 90 s quiet gaps; Codex lapsing while alive and writing later (leaseScript.ts).
    await claudeQuietCodexReclaimed(s);

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
