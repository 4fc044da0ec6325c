import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src-main/base/clock.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { CommitNotes, NOTES_REF } from '../../../src-main/git/commitNotes.js';
import { probeRepo } from '../../../src-main/git/repoProbe.js';
import { BoardNames } from '../../../src-main/git/boardNames.js';
import { TaskRepo } from '../../../src-main/git/taskRepo.js';
import { Fixture, gitSync, makeRepo } from '../../helpers/gitFixture.js';
import { manualTimers } from '../../helpers/manualTimers.js';

const fx = new Fixture();
const boards: JournalBoard[] = [];
afterEach(async () => {
  for (const b of boards.splice(0)) await b.close();
  await fx.cleanup();
});

/** A repository with `n` commits on main, and the notes writer over it, on timers and a clock the test moves. */
async function notesOver(n: number) {
  const root = fx.tmp();
  const folder = join(root, 'project');
  makeRepo(folder);
  for (let i = 0; i < n; i++) {
    fs.writeFileSync(join(folder, 'notes.txt'), `commit ${i}\n`);
    gitSync(folder, ['commit', '-qam', `c${i}`]);
  }
  const shas = gitSync(folder, ['log', '--format=%H', `-${n}`]).split('\n').reverse();
  const probe = await probeRepo(folder);
  if (!probe.ok) throw new Error(probe.reason);
  const { ok: _ok, ...facts } = probe;
  const board = await JournalBoard.open({ dir: join(root, 'board'), threadId: 'notes', warn: () => undefined });
  boards.push(board);
  const clock = new ManualClock();
  const t = manualTimers();
  const warnings: string[] = [];
  const notes = new CommitNotes(new TaskRepo(folder, facts, board, BoardNames.of(board)), clock, (m) => warnings.push(m), t.timers);
  const noteOf = (sha: string) => gitSync(folder, ['log', '-1', `--notes=${NOTES_REF}`, '--format=%N', sha]);
  // How many notes commits the host has made: one per git process it ran for them.
  const writes = () => Number(gitSync(folder, ['for-each-ref', '--format=%(objectname)', NOTES_REF]) ? gitSync(folder, ['rev-list', '--count', NOTES_REF]) : 0);
  return { folder, shas, clock, t, notes, noteOf, writes, warnings };
}

const rec = (sha: string, token: number) => ({ sha, tree: '', token, by: 'a-1' });

describe('the notes of recorded commits', () => {
  it('a burst of records is written in one notes commit once the records pause; the base record and unknown commits get none', async () => {
    const { shas, clock, t, notes, noteOf, writes, warnings } = await notesOver(4);
    const [a, b, c, d] = shas as [string, string, string, string];
    notes.recorded('T-1', rec(a, 0)); // the host's base record: not the task's commit
    notes.recorded('T-1', rec(b, 3));
    clock.advance(200);
    notes.recorded('T-2', rec(c, 5));
    notes.recorded('T-1', rec('f'.repeat(40), 3)); // another host's commit, not in this repository
    // Only the last record's quiet timer is armed: the burst waits for its pause.
    expect(t.size()).toBe(1);
    expect(writes()).toBe(0);
    t.fire();
    await notes.flush();
    expect(writes()).toBe(1);
    expect(noteOf(a)).toBe('');
    expect(noteOf(b)).toBe('Forkbench-Task: T-1\nForkbench-Token: 3');
    expect(noteOf(c)).toBe('Forkbench-Task: T-2\nForkbench-Token: 5');
    // A later batch adds to the notes, keeping the earlier ones.
    notes.recorded('T-1', rec(d, 4));
    await notes.close();
    expect(writes()).toBe(2);
    expect(noteOf(b)).toBe('Forkbench-Task: T-1\nForkbench-Token: 3');
    expect(noteOf(d)).toBe('Forkbench-Task: T-1\nForkbench-Token: 4');
    expect(warnings).toEqual([]);
    // Closed: nothing more is taken.
    notes.recorded('T-1', rec(a, 9));
    expect(t.size()).toBe(0);
  });

  it('records that never pause are still written within the longest wait', async () => {
    const { shas, clock, t, notes, noteOf } = await notesOver(1);
    const sha = shas[0] as string;
    notes.recorded('T-1', rec(sha, 2));
    expect(t.delays()).toEqual([500]);
    // Records keep coming, each before the pause would end: the wait is what is left of the longest one (5 s).
    clock.advance(4800);
    notes.recorded('T-1', rec(sha, 2));
    expect(t.delays()).toEqual([200]);
    clock.advance(200);
    notes.recorded('T-1', rec(sha, 2));
    expect(t.delays()).toEqual([0]);
    // The timer does not keep a closing host's process alive.
    expect(t.unrefd.size).toBe(3);
    t.fire();
    await notes.flush();
    expect(noteOf(sha)).toBe('Forkbench-Task: T-1\nForkbench-Token: 2');
  });

  it("a lock a killed fast-import left on the notes ref stops every write until the next start clears it", async () => {
    const { folder, shas, t, notes, noteOf, warnings } = await notesOver(2);
    const [a, b] = shas as [string, string];
    // What a kill -9 inside `git fast-import` leaves: the ref's lock file.
    const lock = join(folder, '.git', `${NOTES_REF}.lock`);
    fs.mkdirSync(join(lock, '..'), { recursive: true });
    fs.writeFileSync(lock, '');
    notes.recorded('T-1', rec(a, 2));
    t.fire();
    await notes.flush();
    expect(noteOf(a)).toBe('');
    expect(warnings.join('\n')).toContain('forkbench.lock');
    expect(notes.clearInterrupted()).toEqual([lock]);
    expect(notes.clearInterrupted()).toEqual([]);
    notes.recorded('T-1', rec(b, 2));
    t.fire();
    await notes.flush();
    expect(noteOf(b)).toBe('Forkbench-Task: T-1\nForkbench-Token: 2');
  });
});
