import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callAsAgent } from '../../../src-main/agents/agentRpc.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { loadBoard, readLog, readLogTail } from '../../../src-main/board/journal.js';
import { segName, segments } from '../../../src-main/board/journalFiles.js';
import { WriteKeyLimits } from '../../../src-main/board/writeKeys.js';
import { windowBoard } from '../../../src-shared/board/windowBoard.js';

/**
 * Issue 31, item 4: every agent write may carry an idempotency key, and the board answers a write sent again
 * with its key with the first outcome — a success or a refusal — instead of doing it twice. Real board, real
 * journal on disk; the calls go through the same edge the agents' socket uses (callAsAgent).
 */
const dirs: string[] = [];
const boards: JournalBoard[] = [];
function freshDir(): string {
  const d = fs.mkdtempSync(join(tmpdir(), 'forkbench-keys-'));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  for (const b of boards.splice(0)) await b.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A monotonic source the test moves by hand: the board's clock (and so the keys' retention) follows it. */
function handClock() {
  let t = 0;
  return { source: () => t, advance: (ms: number) => (t += ms) };
}

async function open(dir: string, extra: Partial<Parameters<typeof JournalBoard.open>[0]> = {}): Promise<JournalBoard> {
  const b = await JournalBoard.open({ dir, threadId: 'keys', warn: () => undefined, ...extra });
  boards.push(b);
  return b;
}
async function reopen(b: JournalBoard, extra: Partial<Parameters<typeof JournalBoard.open>[0]> = {}): Promise<JournalBoard> {
  await b.close();
  boards.splice(boards.indexOf(b), 1);
  return open(b.dir, extra);
}

const call = (b: JournalBoard, agent: string, method: string, params: object) => callAsAgent(b, agent, method, params);
const notesOf = (b: JournalBoard, id: string) => b.state.tasks.get(id)?.notes.map((n) => n.text) ?? [];

describe('idempotency keys on the board', () => {
  it('an add sent twice with one key makes one task, and the retry gets the first answer', async () => {
    const b = await open(freshDir());
    const first = await call(b, 'a1', 'add', { title: 'once', key: 'k-add' });
    const again = await call(b, 'a1', 'add', { title: 'once', key: 'k-add' });
    expect(first.ok).toBe(true);
    expect(again).toEqual(first);
    expect([...b.state.tasks.keys()]).toEqual(['T-1']);
    // Without a key, or with another, it is a new write: keys change nothing for a caller that sends none.
    await call(b, 'a1', 'add', { title: 'once' });
    await call(b, 'a1', 'add', { title: 'once', key: 'k-add-2' });
    expect(b.state.tasks.size).toBe(3);
  });

  it("a stored outcome's long strings are cut, so each key's record is bounded; the retry still names the task", async () => {
    const b = await open(freshDir());
    const body = 'b'.repeat(5000);
    const first = await call(b, 'a1', 'add', { title: 'long', body, key: 'k-long' });
    expect(first.ok && (first.value as { body: string }).body).toBe(body);
    const again = await call(b, 'a1', 'add', { title: 'long', body, key: 'k-long' });
    const v = again.ok ? (again.value as { id: string; body: string }) : null;
    expect(v?.id).toBe('T-1');
    expect(v?.body).toBe(`${'b'.repeat(WriteKeyLimits.outcomeStringChars)}…`);
    expect(b.state.tasks.size).toBe(1);
  });

  it('a key reused for a different request is refused key-reused and does nothing', async () => {
    const b = await open(freshDir());
    await call(b, 'a1', 'add', { title: 'first', key: 'k' });
    const other = await call(b, 'a1', 'add', { title: 'second', key: 'k' });
    expect(other.ok).toBe(false);
    expect(!other.ok && other.error.data).toEqual({ reason: 'key-reused' });
    expect(!other.ok && other.error.message).toContain('different request');
    expect(b.state.tasks.size).toBe(1);
  });

  it('keys are per agent: another agent sending the same key gets its own outcome, never the first one', async () => {
    const b = await open(freshDir());
    await call(b, 'a1', 'add', { title: 'mine', key: 'shared' });
    const theirs = await call(b, 'a2', 'add', { title: 'mine', key: 'shared' });
    expect(theirs.ok && (theirs.value as { id: string }).id).toBe('T-2');
  });

  it('a retried done whose first try landed gets its success back after the claim has ended', async () => {
    const b = await open(freshDir());
    await call(b, 'a1', 'add', { title: 't' });
    const claim = await call(b, 'a1', 'claim', { taskId: 'T-1' });
    const token = claim.ok && (claim.value as { token: number }).token;
    const done = await call(b, 'a1', 'done', { taskId: 'T-1', token, note: 'finished', key: 'k-done' });
    expect(done.ok).toBe(true);
    // The person approves: the claim is over, so a done without its key would be refused now.
    expect((await b.run((e) => e.approve('T-1'))).ok).toBe(true);
    const unkeyed = await call(b, 'a1', 'done', { taskId: 'T-1', token, note: 'finished' });
    expect(!unkeyed.ok && unkeyed.error.data).toEqual({ reason: 'stale-token' });
    const retried = await call(b, 'a1', 'done', { taskId: 'T-1', token, note: 'finished', key: 'k-done' });
    expect(retried).toEqual(done);
    expect(notesOf(b, 'T-1').filter((n) => n === 'finished')).toHaveLength(1);
  });

  it('a refused write retried with its key is refused again the same way, even once the token it named is the live one', async () => {
    const b = await open(freshDir());
    await call(b, 'a1', 'add', { title: 't' });
    await call(b, 'a1', 'claim', { taskId: 'T-1' }); // token 1
    await b.run((e) => e.userRelease('T-1'));
    // Token 2 does not exist yet: refused.
    const early = await call(b, 'a1', 'note', { taskId: 'T-1', text: 'too early', token: 2, key: 'k-early' });
    expect(early.ok).toBe(false);
    const again = await call(b, 'a1', 'claim', { taskId: 'T-1' });
    expect(again.ok && (again.value as { token: number }).token).toBe(2);
    // Now token 2 is the agent's live claim, and the same note without the key lands; with it, it never does.
    const retried = await call(b, 'a1', 'note', { taskId: 'T-1', text: 'too early', token: 2, key: 'k-early' });
    expect(retried).toEqual(early);
    expect(notesOf(b, 'T-1')).not.toContain('too early');
    const reopened = await reopen(b);
    expect(await call(reopened, 'a1', 'note', { taskId: 'T-1', text: 'too early', token: 2, key: 'k-early' })).toEqual(early);
    expect(notesOf(reopened, 'T-1')).not.toContain('too early');
  });

  it('keys survive a restart, also from a snapshot after compaction, and are pruned after their retention', async () => {
    const clock = handClock();
    const dir = freshDir();
    // A snapshot every 5 events: the keyed writes below are read back from the snapshot, not the segments.
    const opts = { monotonic: clock.source, compactEvery: 5 };
    let b = await open(dir, opts);
    const first = await call(b, 'a1', 'add', { title: 'kept', key: 'k-kept' });
    for (let i = 0; i < 12; i++) await call(b, 'a1', 'add', { title: `filler ${i}`, key: `f-${i}` });
    b = await reopen(b, opts);
    expect(fs.readFileSync(join(dir, 'snapshot.json'), 'utf8')).toContain('k-kept');
    const since = Number(/"segment":(\d+)/.exec(fs.readFileSync(join(dir, 'snapshot.json'), 'utf8'))?.[1]);
    const loadedFrom = segments(dir).filter((n) => n >= since);
    expect(loadedFrom.length).toBeGreaterThan(0);
    expect(loadedFrom.every((n) => !fs.readFileSync(join(dir, segName(n)), 'utf8').includes('k-kept'))).toBe(true);
    expect(await call(b, 'a1', 'add', { title: 'kept', key: 'k-kept' })).toEqual(first);
    expect(b.state.tasks.size).toBe(13);
    // Past the retention (by the board's clock, which resumes across restarts) the key is forgotten: the same
    // request is then a new write, and a restart does not bring the old record back.
    clock.advance(WriteKeyLimits.retentionMs + 1);
    const later = await call(b, 'a1', 'add', { title: 'kept', key: 'k-kept' });
    expect(later.ok && (later.value as { id: string }).id).toBe('T-14');
    expect(b.keyCount).toBe(1); // the 13 older ones are gone
    for (let i = 0; i < 6; i++) await call(b, 'a1', 'add', { title: `more ${i}`, key: `m-${i}` }); // compacts again
    b = await reopen(b, opts);
    expect(b.keyCount).toBe(7);
    expect(fs.readFileSync(join(dir, 'snapshot.json'), 'utf8')).not.toContain('f-3');
  });

  it('keys are bounded per agent: a flood of fresh keys keeps only the newest', async () => {
    const b = await open(freshDir());
    await call(b, 'a1', 'add', { title: 't' });
    await call(b, 'a1', 'claim', { taskId: 'T-1' });
    // Renewals write no text and are not rate-limited beyond the write quota; the person's board has room.
    for (let i = 0; i < WriteKeyLimits.perAgent + 50; i++) await call(b, 'flood', 'renew', { taskId: 'T-1', key: `r-${i}` });
    expect(b.keyCount).toBeLessThanOrEqual(WriteKeyLimits.perAgent + 2);
  }, 60_000);

  it("a keyed write cut short by a crash is dropped whole: its key is never kept without all of its events", async () => {
    const dir = freshDir();
    const b = await open(dir);
    await call(b, 'a1', 'add', { title: 't' });
    await call(b, 'a1', 'claim', { taskId: 'T-1' });
    const noted = await call(b, 'a1', 'note', { taskId: 'T-1', text: 'half', key: 'k-half' });
    expect(noted.ok).toBe(true);
    await b.close();
    boards.splice(0);
    // The note's append is the key's line, the note, and the renewal: a crash that kept the first two only.
    const seg = join(dir, segName(segments(dir).at(-1) as number));
    const lines = fs.readFileSync(seg, 'utf8').split('\n');
    expect(lines.at(-4)).toContain('"writeKey"');
    fs.writeFileSync(seg, `${lines.slice(0, -2).join('\n')}\n`);
    const loaded = loadBoard(dir);
    expect(loaded.warnings.join('\n')).toContain('keyed write cut short');
    expect(loaded.keys.map((k) => k.key)).not.toContain('k-half');
    expect(loaded.board.tasks.get('T-1')?.notes).toHaveLength(0);
    // Its holder is still there (a pty host kept it), so its claim outlives the board host's restart.
    const again = await open(dir, { holders: { fateOf: () => 'alive' } });
    const retried = await call(again, 'a1', 'note', { taskId: 'T-1', text: 'half', key: 'k-half' });
    expect(retried.ok).toBe(true);
    expect(notesOf(again, 'T-1')).toEqual(['half']);
  });

  it("keys and outcomes stay the board's own: not in the window's board, its log or a task's log", async () => {
    const b = await open(freshDir());
    await call(b, 'a1', 'add', { title: 't', key: 'secret-key-1' });
    await call(b, 'a1', 'claim', { taskId: 'T-1', key: 'secret-key-2' });
    await call(b, 'a1', 'note', { taskId: 'T-1', text: 'n', key: 'secret-key-3' });
    const seen = JSON.stringify([windowBoard(b.state), b.logTail(300), b.taskLog('T-1'), [...readLog(b.dir)]]);
    expect(seen).not.toContain('secret-key');
    expect(seen).not.toContain('writeKey');
  });
});

describe('a rate-limited write keeps its key unused', () => {
  it('is refused for its pace, and the same write with the same key is taken once the quota allows', async () => {
    const clock = handClock();
    const b = await open(freshDir(), { monotonic: clock.source });
    let refused: Awaited<ReturnType<typeof call>> | null = null;
    for (let i = 0; i < 500 && !refused; i++) {
      const r = await call(b, 'a1', 'add', { title: `t${i}`, key: `k-${i}` });
      if (!r.ok) refused = r;
    }
    expect(refused && !refused.ok && refused.error.data).toEqual({ reason: 'rate-limited' });
    const tasks = b.state.tasks.size;
    clock.advance(60_000);
    const last = `t${tasks}`;
    const later = await call(b, 'a1', 'add', { title: last, key: `k-${tasks}` });
    expect(later.ok).toBe(true);
    expect(b.state.tasks.size).toBe(tasks + 1);
  });
});

describe("keys' lines in the journal", () => {
  it('leave the log read back from disk whole: the last n events are n events', async () => {
    const clock = handClock();
    const b = await open(freshDir(), { monotonic: clock.source });
    // Several 64 KiB blocks of keyed writes, each a key's line and an event: the tail is read block by block.
    for (let i = 0; i < 400; i++) {
      clock.advance(1000); // within the agent's write quota
      expect((await call(b, 'a1', 'add', { title: `k${i} `.padEnd(200, 'x'), key: `key-${i}` })).ok).toBe(true);
    }
    const seq = b.state.seq;
    const tail = readLogTail(b.dir, 300);
    expect(tail.map((e) => e.seq)).toEqual(Array.from({ length: 300 }, (_, i) => seq - 299 + i));
  }, 60_000);
});
