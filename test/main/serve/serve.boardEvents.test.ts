import { describe, expect, it } from 'vitest';
import { EventPageLimits } from '../../../src-shared/board/eventPage.js';
import { servedProjectOfThisFile } from '../../helpers/serveProcess.js';

/**
 * Issue 32, finding 3, the window's part: `board.events` pages the board's history from its store. A window
 * is untrusted input like any other: a page larger than the cap, a position that is not one, a task id that
 * is not one, a field the call does not have are each refused `invalid-input` with what was wrong, before the
 * store is read; and the host goes on answering. Real `serve`, its window over the WebSocket as the page's.
 */
const { at, start } = servedProjectOfThisFile('fb-board-events-');

describe('the board.events window call', () => {
  it('refuses a bad page request with what was wrong, and answers a good one from the journal', async () => {
    const s = await start();
    const w = s.window;
    for (let i = 1; i <= 25; i++) await w.call('task.add', { key: at.key, title: `task ${i}` });
    const refusal = async (params: unknown) => {
      try {
        await w.call('board.events', params as never);
      } catch (err) {
        return JSON.parse((err as Error).message) as { ok: false; error: { code: string; message: string } };
      }
      throw new Error(`board.events ${JSON.stringify(params)} was answered`);
    };
    const bad: Array<[unknown, RegExp]> = [
      [{ key: at.key, limit: EventPageLimits.maxEvents + 1 }, /at most 500 events a page/],
      [{ key: at.key, limit: 0 }, /limit/],
      [{ key: at.key, limit: 2.5 }, /limit/],
      [{ key: at.key, before: 0 }, /before/],
      [{ key: at.key, before: -3 }, /before/],
      [{ key: at.key, before: '20' }, /before/],
      [{ key: at.key, before: 1e300 }, /before/],
      [{ key: at.key, taskId: 'T-2 OR 1=1' }, /a task id looks like T-12/],
      [{ key: at.key, taskId: 't-2' }, /a task id looks like T-12/],
      [{ key: at.key, taskId: 'T-2', since: 4 }, /since|unrecognized/i],
      [{ key: 'not-a-key' }, /thread key/],
    ];
    for (const [params, why] of bad) {
      const r = await refusal(params);
      expect({ params, code: r.error.code }).toEqual({ params, code: 'invalid-input' });
      expect(r.error.message).toMatch(why);
    }
    expect((await refusal({ key: 'f'.repeat(16) })).error.code).toBe('no-such-thread');

    // Good requests: the newest page by default, a page below a position, one task's events by its exact id.
    const newest = await w.call('board.events', { key: at.key });
    expect(newest.head).toBe(26);
    expect(newest.events.map((e) => e.seq)).toEqual(Array.from({ length: 26 }, (_, i) => 26 - i));
    expect(newest.keptFrom).toMatchObject({ seq: 1 });
    const older = await w.call('board.events', { key: at.key, before: 3, limit: 5 });
    expect(older.events.map((e) => [e.seq, e.kind])).toEqual([
      [2, 'task-added'],
      [1, 'thread-created'],
    ]);
    const t2 = await w.call('board.events', { key: at.key, taskId: 'T-2' });
    expect(t2.events.map((e) => ('taskId' in e ? e.taskId : null))).toEqual(['T-2']);
    s.proc.kill('SIGINT');
    await s.exit;
  }, 120_000);
});
