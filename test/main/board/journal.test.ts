import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { BoardCorruptError, loadBoard, readLog, readLogTail } from '../../../src-main/board/journal.js';

const dirs: string[] = [];
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'forkbench-board-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  vi.useRealTimers();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const segment = (dir: string) => join(dir, fs.readdirSync(dir).filter((f) => f.startsWith('segment-')).sort().at(-1) as string);

describe('journal', () => {
  it('a board comes back after a restart, with tokens that keep increasing and claims released as host-restarted', async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir, threadId: 'th', goal: 'ship' });
    await a.run((e) => e.addTask({ title: 'one', body: 'details' }));
    await a.run((e) => e.addTask({ title: 'two' }));
    const claim = await a.run((e) => e.claim('agent-1', 'T-1'));
    expect(claim.ok).toBe(true);
    await a.close();

    const b = await JournalBoard.open({ dir });
    expect(b.state.threadId).toBe('th');
    expect(b.state.goal).toBe('ship');
    expect(b.state.tasks.get('T-1')).toMatchObject({ title: 'one', body: 'details', state: 'open', lastClaim: { reason: 'host-restarted' } });
    const again = await b.run((e) => e.claim('agent-2', 'T-1'));
    expect(again.ok && claim.ok && again.value.token > claim.value.token).toBe(true);
    expect((await b.log()).map((e) => e.kind)).toEqual(['thread-created', 'task-added', 'task-added', 'grant', 'claim-ended', 'grant']);
    await b.close();
  });

  it('a holder that still exists after a restart keeps its claim with a full lease of grace', async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir });
    await a.run((e) => e.addTask({ title: 'one' }));
    await a.run((e) => e.claim('alive', 'T-1'));
    await a.close();
    const b = await JournalBoard.open({ dir, holders: { fateOf: (id) => (id === 'alive' ? 'alive' : 'unknown') } });
    const c = b.state.tasks.get('T-1')?.claim;
    expect(c?.agentId).toBe('alive');
    expect((c?.deadline ?? 0) - b.clock.now()).toBeGreaterThan(b.state.settings.leaseMs - 1000);
    expect((await b.log()).at(-1)).toMatchObject({ kind: 'renew', via: 'grace' });
    await b.close();
  });

  it('drops a torn last record with a warning and keeps everything before it', async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir });
    await a.run((e) => e.addTask({ title: 'kept' }));
    await a.close();
    const file = segment(dir);
    const good = fs.statSync(file).size;
    fs.appendFileSync(file, '{"seq":3,"kind":"task-add');
    const warnings: string[] = [];
    const b = await JournalBoard.open({ dir, warn: (m) => warnings.push(m) });
    expect(warnings.join('\n')).toMatch(/torn last record/);
    expect(b.state.tasks.get('T-1')?.title).toBe('kept');
    await b.close();
    expect(fs.statSync(file).size).toBeGreaterThanOrEqual(good);
    expect(loadBoard(dir).warnings).toEqual([]);
  });

  it('a file that cannot be parsed is kept aside as a backup and reported, never replaced', async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir });
    await a.run((e) => e.addTask({ title: 'one' }));
    await a.run((e) => e.addTask({ title: 'two' }));
    await a.close();
    const file = segment(dir);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines[1] = 'this is not json';
    fs.writeFileSync(file, lines.join('\n'));
    const damaged = fs.readFileSync(file);
    let err: unknown;
    try {
      await JournalBoard.open({ dir });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BoardCorruptError);
    const { backup } = err as BoardCorruptError;
    expect((err as Error).message).toContain(file);
    expect(fs.readFileSync(backup)).toEqual(damaged);
    expect(fs.readFileSync(file)).toEqual(damaged);
  });

  it('compaction snapshots the board; load and the readable log both survive it', async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir, compactEvery: 25 });
    for (let i = 0; i < 40; i++) {
      const t = await a.run((e) => e.addTask({ title: `t${i}` }));
      if (!t.ok) throw new Error('add failed');
      // An agent per task: one agent claims at most the Thread's claim limit.
      const c = await a.run((e) => e.claim(`ag${i}`, t.value.id));
      if (!c.ok) throw new Error('claim failed');
      await a.run((e) => e.note(`ag${i}`, t.value.id, 'hi', c.value.token));
    }
    const before = structuredClone(a.state);
    const inMemory = a.logTail(30).map((e) => e.seq);
    await a.close();
    expect(fs.existsSync(join(dir, 'snapshot.json'))).toBe(true);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('segment-')).length).toBeGreaterThan(3);
    const loaded = loadBoard(dir);
    expect(loaded.board).toEqual(before);
    const seqs = [...readLog(dir)].map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: before.seq }, (_, i) => i + 1));
    // the tail reads only the newest segments, backwards, but still ends at the last event, in order
    for (const n of [1, 30, 60, 119, 120, 121, seqs.length, seqs.length + 5]) expect(readLogTail(dir, n).map((e) => e.seq)).toEqual(seqs.slice(-n));
    // what a window opens with comes from memory, and says the same as the disk
    expect(inMemory).toEqual(seqs.slice(-30));
    const reopened = await JournalBoard.open({ dir });
    expect(reopened.logTail(30).map((e) => e.seq)).toEqual([...readLog(dir)].map((e) => e.seq).slice(-30));
    await reopened.close();
  });

  it('the tail of a log with a torn last line and events larger than a read block matches the whole log', async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir });
    await a.run((e) => e.addTask({ title: 'big notes' }));
    // 40 KiB notes: several lines span the 64 KiB blocks the tail reads backwards
    for (let i = 0; i < 12; i++) await a.run((e) => e.userNote('T-1', `${i}:`.padEnd(40 * 1024, 'x')));
    await a.close();
    fs.appendFileSync(segment(dir), '{"seq":99,"kind":"no');
    const all = [...readLog(dir)].map((e) => e.seq);
    for (const n of [1, 2, 5, 13, 14, 50]) expect(readLogTail(dir, n).map((e) => e.seq)).toEqual(all.slice(-n));
    // and the events come back whole
    expect((readLogTail(dir, 1)[0] as { text?: string }).text?.length).toBe(40 * 1024);
  });

  it('the host timer lapses a claim at its deadline with no call from anyone, and a renewed claim is left alone', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const dir = freshDir();
    const svc = await JournalBoard.open({ dir, monotonic: () => performance.now() });
    await svc.run((e) => e.setSettings({ leaseMs: 2000 }));
    await svc.run((e) => e.addTask({ title: 'a' }));
    await svc.run((e) => e.addTask({ title: 'b' }));
    await svc.run((e) => e.claim('x', 'T-1'));
    await svc.run((e) => e.claim('y', 'T-2'));
    vi.advanceTimersByTime(1500);
    await svc.run((e) => e.renew('y', 'T-2'));
    vi.advanceTimersByTime(499);
    expect(svc.state.tasks.get('T-1')?.state).toBe('claimed');
    vi.advanceTimersByTime(1);
    expect(svc.state.tasks.get('T-1')).toMatchObject({ state: 'open', lastClaim: { reason: 'lapsed' } });
    // T-2's first deadline passed too, but it was renewed: the timer that fires there does nothing to it
    expect(svc.state.tasks.get('T-2')?.state).toBe('claimed');
    vi.advanceTimersByTime(1500);
    expect(svc.state.tasks.get('T-2')?.state).toBe('open');
    await svc.close();
  });
});
