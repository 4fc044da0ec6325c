/**
 * Issue 45, item 1: a Thread's local board (a real journal on disk) copied onto a shared board on a real
 * PostgreSQL by the engine's one decision (boardCarry.ts). Into a board that has tasks already: new ids, the map
 * kept on each task and in the log, dependencies mapped, notes with their authors and times, states, claims
 * ended `board-moved`, the verify command carried onto the tasks; seen the same by another host. Once: a second
 * copy, or two hosts copying the same local board at the same moment, carry nothing twice. Into a board with no
 * tasks: ids kept, goal and settings carried.
 */
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import type { CarrySource } from '../../../../src-shared/board/boardCarry.js';
import { JournalBoard } from '../../../../src-main/board/journalBoard.js';
import type { PgBoard } from '../../../../src-main/board/pg/pgBoard.js';
import { carryOnto, carrySource, localBoard } from '../../../../src-main/window/boardMove.js';
import { pgHostsForFile } from '../../../helpers/pgHosts.js';
import { waitFor } from '../../../helpers/pty.js';

const hosts = pgHostsForFile({ name: 'team board', goal: '' });
const tmp = hosts.tmp;
/** A host whose own Thread id would be the board's, were it the first to open it. */
const host = (url: string, hostId: string): Promise<PgBoard> => hosts.host(url, hostId, { threadId: `thread-of-${hostId}` });

/**
 * A local board as a person leaves it: five tasks (T-2 waits on T-1; T-1 has two notes; T-3 is held by an
 * agent; T-4 is blocked; T-5 is in review, its claim still standing), a goal, a verify command. Written to a
 * journal and read back as the move reads it.
 */
async function localSource(): Promise<{ src: CarrySource; noteTimes: number[] }> {
  const dir = tmp('fb-carry-local-');
  const j = await JournalBoard.open({ dir, threadId: 'local-thread', goal: 'ship the parser' });
  await j.run((e) => e.setSettings({ verify: 'npm test' }));
  for (const title of ['parse', 'print', 'claimed work', 'stuck', 'reviewed work']) await j.run((e) => e.addTask({ title, body: `body of ${title}` }));
  await j.run((e) => e.editTask('T-2', {}, 'user', ['T-1']));
  await j.run((e) => e.userNote('T-1', 'grammar is LL(1)'));
  await j.run((e) => e.assign('T-1', 'agent-a'));
  await j.run((e) => e.note('agent-a', 'T-1', 'tokenizer done'));
  await j.run((e) => e.userRelease('T-1'));
  await j.run((e) => e.assign('T-3', 'agent-a'));
  await j.run((e) => e.block('T-4', 'waits on the API'));
  await j.run((e) => e.assign('T-5', 'agent-b'));
  await j.run((e) => e.done('agent-b', 'T-5'));
  const noteTimes = j.state.tasks.get('T-1')!.notes.map((n) => n.at);
  await j.close();
  return { src: carrySource(localBoard(dir), tmp('fb-carry-data-'), '/home/me/parser'), noteTimes };
}

describe('a local board copied onto a shared board', () => {
  it('into a board with tasks: new ids and the map, everything carried; the same on another host; a second copy and two at once carry nothing twice', async () => {
    const url = await hosts.freshDb();
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b');
    for (const title of ['theirs 1', 'theirs 2', 'theirs 3']) expect((await b.run((e) => e.addTask({ title }))).ok).toBe(true);
    const { src, noteTimes } = await localSource();

    const first = await carryOnto(a, src);
    expect(first.copied).toEqual([
      ['T-1', 'T-4'],
      ['T-2', 'T-5'],
      ['T-3', 'T-6'],
      ['T-4', 'T-7'],
      ['T-5', 'T-8'],
    ]);
    expect(first.already).toEqual([]);
    expect(first.settings).toBe(false);

    await waitFor(() => b.state.seq === a.state.seq, 10_000, 'B to follow the copy');
    for (const board of [a, b]) {
      const t = (id: string) => board.state.tasks.get(id)!;
      expect([...board.state.tasks.keys()]).toEqual(['T-1', 'T-2', 'T-3', 'T-4', 'T-5', 'T-6', 'T-7', 'T-8']);
      expect(t('T-1').title).toBe('theirs 1');
      // Each carried task says where it came from: the map, on the board.
      expect(t('T-4').copiedFrom).toEqual({ board: src.id, taskId: 'T-1' });
      expect(t('T-8').copiedFrom).toEqual({ board: src.id, taskId: 'T-5' });
      expect(t('T-4').body).toBe('body of parse');
      expect(t('T-4').notes.map((n) => [n.by, n.text, n.at])).toEqual([
        ['user', 'grammar is LL(1)', noteTimes[0]],
        ['agent-a', 'tokenizer done', noteTimes[1]],
      ]);
      expect(t('T-5').after).toEqual(['T-4']);
      expect(t('T-6')).toMatchObject({ state: 'open', claim: null, lastClaim: { agentId: 'agent-a', reason: 'board-moved' } });
      expect(t('T-7')).toMatchObject({ state: 'blocked', blockedReason: 'waits on the API' });
      expect(t('T-8')).toMatchObject({ state: 'review', claim: null, lastClaim: { agentId: 'agent-b', reason: 'board-moved' } });
      // The board in use keeps its own goal and settings; the old verify command goes with each carried task.
      expect(board.state.goal).toBe('');
      expect(board.state.settings.verify).toBeNull();
      expect(t('T-4').verify).toBe('npm test');
      expect(t('T-1').verify).toBeNull();
    }
    const log = await b.log();
    const copied = log.filter((e) => e.kind === 'board-copied');
    expect(copied).toHaveLength(1);
    expect(copied[0]).toMatchObject({ copied: 5, already: 0, runs: [[1, 4, 5]], from: { board: src.id, label: 'the local board of /home/me/parser on ' + os.hostname() } });

    // Again: nothing is carried twice; the answer names the ids the first copy gave.
    const again = await carryOnto(a, src);
    expect(again.copied).toEqual([]);
    expect(again.already).toEqual(first.copied);
    // Two hosts at once (a retry racing a first try): one decides first under the board's lock, the other finds it done.
    const both = await Promise.all([carryOnto(a, src), carryOnto(b, src)]);
    expect(both.every((o) => o.copied.length === 0)).toBe(true);
    await waitFor(() => b.state.seq === a.state.seq, 10_000, 'B to follow');
    expect(a.state.tasks.size).toBe(8);
    expect(b.state.tasks.size).toBe(8);
    expect((await a.log()).filter((e) => e.kind === 'task-copied')).toHaveLength(5);
  }, 120_000);

  it('two hosts copying the same local board at the same moment onto a fresh board: one copy', async () => {
    const url = await hosts.freshDb();
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b');
    const { src } = await localSource();
    const [x, y] = await Promise.all([carryOnto(a, src), carryOnto(b, src)]);
    expect([x.copied.length, y.copied.length].sort()).toEqual([0, 5]);
    await waitFor(() => b.state.seq === a.state.seq, 10_000, 'B to follow');
    expect(a.state.tasks.size).toBe(5);
  }, 120_000);

  it('into a board with no tasks: the ids stay, and the goal and settings (verify included) come too', async () => {
    const url = await hosts.freshDb();
    const a = await host(url, 'host-a');
    const { src } = await localSource();
    const o = await carryOnto(a, src);
    expect(o.copied.map(([from, to]) => from === to)).toEqual([true, true, true, true, true]);
    expect(o.settings).toBe(true);
    expect(a.state.goal).toBe('ship the parser');
    expect(a.state.settings.verify).toBe('npm test');
    // The task kept its own (none): the Thread's verify covers it, as before the move.
    expect(a.state.tasks.get('T-1')!.verify).toBeNull();
    expect(a.state.tasks.get('T-2')!.after).toEqual(['T-1']);
    // New tasks are numbered on from the carried ones.
    const added = await a.run((e) => e.addTask({ title: 'after the move' }));
    expect(added.ok && added.value.id).toBe('T-6');
  }, 120_000);
});
