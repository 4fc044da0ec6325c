import fs from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EventPageLimits } from '../../../src-shared/board/eventPage.js';
import type { WindowParams } from '../../../src-shared/protocol/windowApi.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { AppController } from '../../../src-renderer/state/controller.js';
import { firstOf, LOG_CAP, LOG_HISTORY_CAP, type LogEntry } from '../../../src-renderer/state/eventLog.js';
import { coverageWords, logCoverage } from '../../../src-renderer/state/logHistory.js';
import { agent, FakeTransport, settle, snapshotOf } from '../../helpers/renderer.js';

/**
 * Issue 32, finding 3, the window's side: the event-log panel holds a bounded, unbroken run of the board's
 * history, says how much of it that is, and reads older pages from the board's own store. The store here is a
 * real journal on disk, answering `board.events` as the host's ThreadApi does; the page's controller is the
 * real one, its transport an in-memory one.
 */
const KEY = '0123456789abcdef';
const dirs: string[] = [];
const boards: JournalBoard[] = [];
afterEach(async () => {
  for (const b of boards.splice(0)) await b.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function windowOn(tasks: number, o: { compactBytes?: number; historyKeepBytes?: number } = {}) {
  const dir = fs.mkdtempSync(join(os.tmpdir(), 'fb-loghistory-'));
  dirs.push(dir);
  const board = await JournalBoard.open({ dir, threadId: KEY, warn: () => undefined, ...o });
  boards.push(board);
  for (let n = 0; n < tasks; n += 200) await board.apply((e) => {
    for (let i = n; i < Math.min(tasks, n + 200); i++) e.addTask({ title: `task ${i + 1}` });
  });
  const t = new FakeTransport();
  t.on('threads.list', () => [{ key: KEY, open: true, folder: '/p', goal: '' }]);
  t.on('thread.snapshot', () => snapshotOf(board.engine, { agents: [agent('a1', { name: 'shell 1' })], log: board.logTail(300) }));
  /** The page a read waits on, when a test holds it back to push events meanwhile. */
  let gate: Promise<void> | null = null;
  t.on('board.events', async (p: WindowParams<'board.events'>) => {
    if (gate) await gate;
    return board.history({ before: p.before, limit: p.limit ?? EventPageLimits.maxEvents, taskId: p.taskId });
  });
  board.onEvent((event) => t.push({ type: 'board-event', key: KEY, event }));
  const c = new AppController(t, { setTimeout: () => undefined, clearTimeout: () => undefined });
  c.start();
  await waitUntil(() => c.state.log.length > 0);
  return { board, c, t, hold: (p: Promise<void> | null) => (gate = p) };
}

async function waitUntil(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !ok(); i++) await settle();
  expect(ok()).toBe(true);
}

const seqs = (l: readonly LogEntry[]) => l.map((e) => e.seq);
const run = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const coverage = (c: AppController) => logCoverage(c.state.log, c.state.logPaging, c.state.board?.seq ?? 0);

describe('the event log panel against the board history', () => {
  it('says it holds the newest 300 of 1,201, reads older pages back to the first event, and then says all', async () => {
    const { c } = await windowOn(1200);
    expect(seqs(c.state.log)).toEqual(run(902, 1201));
    expect(coverageWords(coverage(c))).toBe('the 300 newest of 1,201 events');
    expect(coverage(c).older).toBe(true);
    await c.history.loadOlder();
    expect(seqs(c.state.log)).toEqual(run(402, 1201));
    expect(coverageWords(coverage(c))).toBe('the 800 newest of 1,201 events');
    await c.history.loadOlder();
    expect(seqs(c.state.log)).toEqual(run(1, 1201));
    expect(coverage(c)).toMatchObject({ older: false, removed: null, newer: 0 });
    expect(coverageWords(coverage(c))).toBe('all 1,201 events');
  });

  it('keeps the lines unbroken when events come while an older page is read', async () => {
    const { board, c, hold } = await windowOn(600);
    let open!: () => void;
    hold(new Promise((r) => (open = r)));
    const reading = c.history.loadOlder();
    for (let i = 0; i < 40; i++) await board.run((e) => e.addTask({ title: `while reading ${i}` }));
    await waitUntil(() => c.state.log.at(-1)?.seq === board.state.seq);
    open();
    await reading;
    expect(seqs(c.state.log)).toEqual(run(1, board.state.seq));
  });

  it(`holds at most ${LOG_HISTORY_CAP} lines: read further back, it stops following and goes back to the newest on request`, async () => {
    const { board, c } = await windowOn(5600);
    const head = board.state.seq;
    for (let i = 0; i < 12 && coverage(c).older; i++) await c.history.loadOlder();
    expect(c.state.log.length).toBe(LOG_HISTORY_CAP);
    expect(firstOf(c.state.log[0] as LogEntry)).toBe(1);
    expect(c.state.logPaging.following).toBe(false);
    // A live event is counted, not shown: the lines stay one run.
    await board.run((e) => e.addTask({ title: 'newest' }));
    await waitUntil(() => c.state.board?.seq === head + 1);
    expect(c.state.log.length).toBe(LOG_HISTORY_CAP);
    expect(coverageWords(coverage(c))).toBe(`events #1–#5,000 of 5,602; 602 newer not shown`);
    await c.history.backToNewest();
    expect(seqs(c.state.log)).toEqual(run(head + 1 - LOG_CAP + 1, head + 1));
    expect(c.state.logPaging.following).toBe(true);
    expect(coverageWords(coverage(c))).toBe(`the 500 newest of 5,602 events`);
  });

  it('reads a task by its exact id from the store, its oldest events too', async () => {
    const { c } = await windowOn(2011);
    const t2 = await c.history.taskPage('T-2');
    expect(t2?.lines.map((e) => e.summary)).toEqual(['T-2 added by you: task 2']);
    expect(t2?.more).toBe(false);
    expect((await c.history.taskPage('T-2000'))?.lines.map((e) => e.seq)).toEqual([2001]);
  });

  it('says so when the journal no longer keeps the oldest events, once the lines reach what it keeps', async () => {
    // ~120 bytes an event: some 800 of the 2,001 events are kept, more than the snapshot's 300.
    const { board, c } = await windowOn(2000, { compactBytes: 32 * 1024, historyKeepBytes: 96 * 1024 });
    for (let i = 0; i < 10 && coverage(c).older; i++) await c.history.loadOlder();
    const cov = coverage(c);
    expect(cov.older).toBe(false);
    expect(cov.removed?.seq).toBeGreaterThan(1);
    expect(cov.from).toBe(cov.removed?.seq);
    expect(cov.to).toBe(board.state.seq);
  });
});
