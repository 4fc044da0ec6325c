/**
 * Issue 32, finding 3: the event-log panel forgot without saying so. After 2,000 task adds it held the
 * host's recent tail ("300 of 302") though more than 2,100 events had happened. Each store now serves its
 * own history a page at a time (BoardService.history): the journal from the segments it keeps, PostgreSQL
 * from forkbench.events. The same scenario runs on both: 2,011 tasks, then T-2 claimed, reassigned, and a
 * late note on it refused; every event is reachable by paging back, newest first and without a gap, and a
 * task's own events are asked for by its exact id (T-2 is not T-20).
 */
import fs from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { EventPageLimits, type EventPage } from '../../../src-shared/board/eventPage.js';
import type { BoardService } from '../../../src-main/board/boardService.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { readLog, readLogPage } from '../../../src-main/board/journal.js';
import { segName, segments } from '../../../src-main/board/journalFiles.js';
import { PgBoard } from '../../../src-main/board/pg/pgBoard.js';
import { startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';

/** More tasks than the panel's 300-event tail and the host's 1,000 kept, and ids T-20, T-200, T-2000 that
 *  begin with T-2. */
const TASKS = 2011;
/** Tasks added per decision: one durable append (or transaction) each, so the setup takes a second. */
const BATCH = 100;

const dirs: string[] = [];
function freshDir(): string {
  const d = fs.mkdtempSync(join(os.tmpdir(), 'fb-history-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** The day: TASKS tasks, then T-2 claimed by a1, given to a2 by the person, and a1's late note refused. */
async function fill(b: BoardService): Promise<void> {
  for (let n = 0; n < TASKS; n += BATCH) {
    await b.apply((e) => {
      for (let i = n; i < Math.min(TASKS, n + BATCH); i++) e.addTask({ title: `task ${i + 1}` });
    });
  }
  b.membership?.hostAgent('a1');
  b.membership?.hostAgent('a2');
  const claimed = await b.run((e) => e.claim('a1', 'T-2'));
  expect(claimed.ok).toBe(true);
  const token = claimed.ok ? claimed.value.token : 0;
  expect((await b.run((e) => e.assign('T-2', 'a2'))).ok).toBe(true);
  const late = await b.run((e) => e.note('a1', 'T-2', 'still on it', token));
  expect(late.ok ? null : late.error.code).toBe('stale-token');
}

/** Every page from the newest back, until the store has no older one. */
async function pageBack(b: BoardService, o: { limit: number; taskId?: string }): Promise<{ pages: EventPage[]; events: BoardEvent[] }> {
  const pages: EventPage[] = [];
  let before: number | undefined;
  for (;;) {
    const p = await b.history({ ...o, ...(before !== undefined ? { before } : {}) });
    expect(p.events.length).toBeLessThanOrEqual(o.limit);
    if (!p.events.length) break;
    pages.push(p);
    before = (p.events.at(-1) as BoardEvent).seq;
  }
  return { pages, events: pages.flatMap((p) => p.events) };
}

const seqs = (es: readonly BoardEvent[]) => es.map((e) => e.seq);
const countdown = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i);

/** What both stores must answer for the day `fill` made. */
async function expectWholeHistory(b: BoardService): Promise<void> {
  const head = b.state.seq;
  expect(head).toBeGreaterThan(TASKS);

  // The newest page: the head and the events just before it, newest first, no gap.
  const newest = await b.history({ limit: EventPageLimits.maxEvents });
  expect(newest.head).toBe(head);
  expect(seqs(newest.events)).toEqual(countdown(head, head - EventPageLimits.maxEvents + 1));
  expect(newest.keptFrom).toMatchObject({ seq: 1 });
  expect(newest.events.at(-1)?.kind).toBe('task-added');

  // Paged back to the beginning: every event once, in order, the board's own first event last.
  const all = await pageBack(b, { limit: 300 });
  expect(seqs(all.events)).toEqual(countdown(head, 1));
  expect(all.events.at(-1)).toMatchObject({ seq: 1, kind: 'thread-created' });
  expect(newest.keptFrom?.at).toBe(all.events.at(-1)?.at);
  expect(all.pages.length).toBe(Math.ceil(head / 300));
  expect(await b.history({ before: 1, limit: 10 })).toMatchObject({ events: [], head });

  // T-2's events by its exact id: its add, claim, reassignment and refused note, and nothing about T-20….
  const t2 = await pageBack(b, { limit: 2, taskId: 'T-2' });
  expect(t2.events.map((e) => e.kind)).toEqual(['write-rejected', 'reassign', 'grant', 'task-added']);
  expect(t2.events.every((e) => 'taskId' in e && e.taskId === 'T-2')).toBe(true);
  expect(seqs(t2.events)).toEqual([...seqs(t2.events)].sort((x, y) => y - x));
  const t2000 = await b.history({ limit: 10, taskId: 'T-2000' });
  expect(t2000.events.map((e) => e.kind)).toEqual(['task-added']);
  expect(await b.history({ limit: 10, taskId: 'T-9999' })).toMatchObject({ events: [] });
}

describe('the board history on the journal', () => {
  it('pages back through every event, across segments, newest first; and a task by its exact id', async () => {
    // A snapshot every 400 events: the history spans six segments, so pages cross their boundaries.
    const b = await JournalBoard.open({ dir: freshDir(), threadId: 'th', compactEvery: 400, warn: () => undefined });
    try {
      await fill(b);
      await expectWholeHistory(b);
    } finally {
      await b.close();
    }
  }, 60_000);

  it('says where its kept history begins once old segments are removed, and pages back exactly to there', async () => {
    const dir = freshDir();
    // Segments of ~16 KiB and 48 KiB of them kept: most of the day's history is removed.
    const b = await JournalBoard.open({ dir, threadId: 'th', compactBytes: 16 * 1024, historyKeepBytes: 48 * 1024, warn: () => undefined });
    try {
      await fill(b);
      const onDisk = [...readLog(dir)];
      const first = onDisk[0] as BoardEvent;
      expect(first.seq).toBeGreaterThan(1);
      const all = await pageBack(b, { limit: 250 });
      expect(all.pages[0]?.keptFrom).toEqual({ seq: first.seq, at: first.at });
      expect(seqs(all.events)).toEqual(countdown(b.state.seq, first.seq));
      // T-1's add went with the removed segments; T-2's last events are kept.
      expect((await b.history({ limit: 10, taskId: 'T-1' })).events).toEqual([]);
      expect((await b.history({ limit: 10, taskId: 'T-2' })).events.map((e) => e.kind)).toEqual(['write-rejected', 'reassign', 'grant']);
    } finally {
      await b.close();
    }
  }, 60_000);

  it('leaves out a torn last line (a write a crash cut short), and pages on below it', async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir, threadId: 'th', compactEvery: 400, warn: () => undefined });
    await fill(a);
    const head = a.state.seq;
    await a.close();
    const newest = segments(dir).at(-1) as number;
    fs.appendFileSync(join(dir, segName(newest)), '{"kind":"note","taskId":"T-2","by":"a1","text":"cut sh');
    expect(seqs(readLogPage(dir, Infinity, 5))).toEqual(countdown(head, head - 4));
    expect(seqs(readLogPage(dir, head - 1, 3))).toEqual(countdown(head - 2, head - 4));
  }, 60_000);
});

describe('the board history on PostgreSQL', () => {
  let pgc: PgCluster;
  const pools: pg.Pool[] = [];

  beforeAll(async () => {
    pgc = await startPgCluster({ fsync: false });
  }, 60_000);
  afterAll(async () => {
    for (const p of pools.splice(0)) await p.end();
    await pgc?.dispose();
  });

  it('pages back through forkbench.events, newest first; a task by its exact id; another host reads the same', async () => {
    const url = await pgc.createDatabase('history');
    const open = async (hostId: string) => {
      const pool = new pg.Pool({ connectionString: url, max: 4, pipeline: true });
      pool.on('error', () => undefined);
      pools.push(pool);
      return PgBoard.open({
        pool,
        listenClient: () => new pg.Client({ connectionString: url }),
        name: 'history',
        dir: freshDir(),
        hostId,
        hostName: hostId,
        threadId: 'th',
        goal: '',
        warn: () => undefined,
      });
    };
    const a = await open('host-a');
    const b = await open('host-b');
    try {
      await fill(a);
      await expectWholeHistory(a);
      // Host B, which joined before the day began and reads the database, not its memory, sees it all too.
      const fromB = await pageBack(b, { limit: EventPageLimits.maxEvents });
      expect(seqs(fromB.events)).toEqual(countdown(a.state.seq, 1));
    } finally {
      await a.close();
      await b.close();
    }
  }, 120_000);
});
