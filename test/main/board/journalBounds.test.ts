/**
 * Issue 42, item 6: a journal event appended with a valid checksum while serve was down gave a 10-year
 * lease. A checksum says a line is whole, not that the board wrote it: the board's limits are checked again
 * when a journal or a snapshot is opened, and what is past them is read within them, and said.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { readSnapshot, writeSnapshot } from '../../../src-main/board/snapshotFile.js';
import { Limits } from '../../../src-shared/board/limits.js';
import { deserializeBoard } from '../../../src-shared/board/serialized.js';

const dirs: string[] = [];
function freshDir(): string {
  const d = fs.mkdtempSync(join(tmpdir(), 'forkbench-bounds-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const TEN_YEARS = 10 * 365 * 24 * 3_600_000;
/** What the board allows a deadline past its decision beyond the lease (eventBounds.ts): a minute. */
const SLACK = 60_000;
const segmentsOf = (dir: string) => fs.readdirSync(dir).filter((f) => /^segment-\d+\.jsonl$/.test(f)).sort();

/** A journal line as the board writes it, its CRC-32 made by zlib (not the journal's own code). */
function recordLine(value: object): string {
  const json = JSON.stringify(value);
  return `${json.slice(0, -1)},"crc":"${zlib.crc32(json).toString(16).padStart(8, '0')}"}\n`;
}

/** A board with T-1 claimed by agent-1, closed; its last event as written. */
async function claimedBoard(dir: string, o: { compactEvery?: number } = {}) {
  const b = await JournalBoard.open({ dir, threadId: 'th', ...o });
  await b.run((e) => e.addTask({ title: 'work' }));
  const c = await b.run((e) => e.claim('agent-1', 'T-1'));
  if (!c.ok) throw new Error('claim refused');
  const last = (await b.log()).at(-1) as { seq: number; mono: number; at: number };
  await b.close();
  return { last, token: c.value.token };
}

/** The board opened again as a host whose agent's pane lived on (a pty host): its claims get grace, not an end. */
const reopen = (dir: string, warned: string[]) => JournalBoard.open({ dir, warn: (m) => warned.push(m), holders: { fateOf: () => 'alive' } });

describe('the board’s limits, checked again on what is read back', () => {
  it('a renew of ten years appended to the journal with a valid checksum while the host was down: set aside, the claim as it was, and said', async () => {
    const dir = freshDir();
    const { last, token } = await claimedBoard(dir);
    const mono = last.mono + 1;
    const forged = { seq: last.seq + 1, at: last.at + 1, mono, kind: 'renew', taskId: 'T-1', agentId: 'agent-1', token, deadline: mono + TEN_YEARS, via: 'write' };
    fs.appendFileSync(join(dir, segmentsOf(dir).at(-1) as string), recordLine(forged));

    const warned: string[] = [];
    const b = await reopen(dir, warned);
    try {
      const claim = b.state.tasks.get('T-1')?.claim;
      expect(claim?.token).toBe(token);
      expect((claim?.deadline ?? Infinity) - mono).toBeLessThanOrEqual(Limits.maxLeaseMs + SLACK);
      expect(b.quarantine.found()).toEqual([expect.objectContaining({ seq: forged.seq, kind: 'renew', why: expect.stringMatching(/past the board's longest \(12 h\)/) })]);
    } finally {
      await b.close();
    }
  });

  it('a snapshot whose claim runs ten years and whose settings give ten-year leases, written whole with its checksum: read within the limits, and said', async () => {
    const dir = freshDir();
    // Every event compacts: the board is in its snapshot.
    await claimedBoard(dir, { compactEvery: 1 });
    const path = join(dir, 'snapshot.json');
    const snap = readSnapshot(fs.readFileSync(path));
    const board = deserializeBoard(snap.board);
    const t = board.tasks.get('T-1');
    if (!t?.claim) throw new Error('T-1 is not claimed in the snapshot');
    board.tasks.set('T-1', { ...t, claim: { ...t.claim, deadline: snap.mono + TEN_YEARS } });
    board.settings = { ...board.settings, leaseMs: TEN_YEARS };
    writeSnapshot(path, snap.segment, snap.mono, board, snap.keys ?? []);

    const warned: string[] = [];
    const b = await reopen(dir, warned);
    try {
      expect((b.state.tasks.get('T-1')?.claim?.deadline ?? Infinity) - snap.mono).toBeLessThanOrEqual(Limits.maxLeaseMs + SLACK);
      expect(b.state.settings.leaseMs).toBe(Limits.maxLeaseMs);
      expect(warned.join('\n')).toMatch(/T-1's claim holds a lease ending \d+ ms after the snapshot, past the board's limits/);
      expect(warned.join('\n')).toMatch(new RegExp(`the settings hold a lease of ${TEN_YEARS} ms, past the board's limits`));
      // A new grant under those settings is no longer than the limit either.
      await b.run((e) => e.addTask({ title: 'next' }));
      const c = await b.run((e) => e.claim('agent-2', 'T-2'));
      expect(c.ok).toBe(true);
      const grant = (await b.log()).filter((e) => e.kind === 'grant').at(-1) as { taskId: string; mono: number; deadline: number };
      expect(grant.taskId).toBe('T-2');
      expect(grant.deadline - grant.mono).toBeLessThanOrEqual(Limits.maxLeaseMs + SLACK);
    } finally {
      await b.close();
    }
  });
});
