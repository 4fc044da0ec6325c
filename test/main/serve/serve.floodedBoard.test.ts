import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureRendererBuilt } from '../../../e2e/harness.js';
import { BoardLimits, Limits } from '../../../src-shared/board/limits.js';
import { threadKeyOf } from '../../../src-main/thread/threadHost.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { serveOn, type ServeProc } from '../../helpers/serveProcess.js';
import { writeFloodedBoard } from '../../helpers/floodedBoard.js';

/**
 * Issue 29, finding 4: a board that a flood filled before there were limits opens, and keeps opening after a
 * restart. Its journal is what the flood left: 8,400 tasks of 64 KiB, 551 MB in one segment, more text than
 * V8 lets one string hold (2^29 - 24 characters), so the window's snapshot of every body threw `RangeError:
 * Invalid string length` and the page never opened, before and after a restart. Real serve processes, the
 * page's WebSocket and protocol.
 */
const TASKS = 8_400;
const root = fs.mkdtempSync(join(tmpdir(), 'fb-flooded-'));
const project = join(root, 'project');
fs.mkdirSync(project);
const key = threadKeyOf(project);
const boardDir = join(root, 'data', 'threads', key);
const serves: ServeProc[] = [];

afterAll(async () => {
  for (const s of serves) if (s.proc.exitCode === null) s.proc.kill('SIGKILL');
  fs.rmSync(root, { recursive: true, force: true });
});

const segmentBytes = () => fs.readdirSync(boardDir).filter((f) => /^segment-\d+\.jsonl$/.test(f)).reduce((n, f) => n + fs.statSync(join(boardDir, f)).size, 0);

describe('a board flooded before there were limits', () => {
  it('opens in the window, gives a task its body on demand, refuses more text clearly, and after a restart opens again from a bounded journal', async () => {
    ensureBuilt();
    ensureRendererBuilt();
    writeFloodedBoard(boardDir, key, TASKS);
    expect(segmentBytes()).toBeGreaterThan(2 ** 29);

    const first = await serveOn({ root, project });
    serves.push(first);
    const snap = await first.window.call('thread.snapshot', { key });
    expect(snap.board.tasks).toHaveLength(TASKS);
    // Titles and counts, not bodies: the whole snapshot is a few MB however much the bodies hold.
    expect(JSON.stringify(snap).length).toBeLessThan(8 * 1024 * 1024);
    expect(snap.board.tasks[0]).toMatchObject({ id: 'T-1', title: 'flood 1', omitted: { bodyChars: Limits.maxBodyChars, notes: 0 } });
    const details = await first.window.call('task.details', { key, taskId: `T-${TASKS}` });
    expect(details.body).toHaveLength(Limits.maxBodyChars);
    expect(details.body.startsWith(`flood ${TASKS} `)).toBe(true);

    // Over the text cap already: more text is refused with the reason, and nothing on the board changes.
    await expect(first.window.call('task.add', { key, title: 'one more', body: 'y'.repeat(1000) })).rejects.toThrow(/board-full.*Nothing was written.*Shorten or empty/);
    // Making room works, and it is a write: the journal is snapshotted and the flood's segment removed.
    await first.window.call('task.edit', { key, taskId: 'T-1', body: 'emptied' });
    first.proc.kill('SIGINT');
    expect(await first.exit).toBe(0);
    expect(segmentBytes()).toBeLessThan(BoardLimits.maxTextChars);

    const second = await serveOn({ root, project });
    serves.push(second);
    const again = await second.window.call('thread.snapshot', { key });
    expect(again.board.tasks).toHaveLength(TASKS);
    expect(again.board.tasks[0]).toMatchObject({ id: 'T-1', body: 'emptied' });
    expect((await second.window.call('task.details', { key, taskId: 'T-4200' })).body.startsWith('flood 4200 ')).toBe(true);
    second.proc.kill('SIGINT');
    expect(await second.exit).toBe(0);
  }, 300_000);
});
