import { describe, expect, it } from 'vitest';
import type { BoardStoreView } from '../../../src-shared/protocol/windowApi.js';
import { AppController } from '../../../src-renderer/state/controller.js';
import { describeStore, readUrlField } from '../../../src-renderer/state/boardStoreField.js';
import { HostCallError } from '../../../src-renderer/transport/types.js';
import { engineWith, FakeTransport, settle, snapshotOf } from '../../helpers/renderer.js';

const KEY = '0123456789abcdef';
const SHARED: BoardStoreView = { kind: 'postgres', where: 'db.example/forkbench', name: 'team', fixed: false, host: 'buildbox-3f9c' };

/** A window showing one Thread whose host answers snapshots with the store it is told. */
async function shown(store: BoardStoreView = { kind: 'journal' }) {
  const host = engineWith(['parse']);
  const t = new FakeTransport();
  const at = { store };
  t.on('threads.list', () => [{ key: KEY, open: true, folder: '/p', goal: '' }]);
  t.on('thread.snapshot', () => snapshotOf(host.engine, { store: at.store }));
  const c = new AppController(t);
  c.start();
  await settle();
  expect(c.state.activeKey).toBe(KEY);
  return { c, t, at };
}

describe('the Shared board setting', () => {
  it('shows the store from the snapshot as "host/db, board NAME", or the journal', async () => {
    expect(describeStore(null)).toBe('this computer only (journal)');
    expect(describeStore({ kind: 'journal' })).toBe('this computer only (journal)');
    expect(describeStore(SHARED)).toBe('db.example/forkbench, board team');
    const { c } = await shown(SHARED);
    expect(c.state.boardStore).toEqual(SHARED);
  });

  it('checks the URL field’s shape before sending, without repeating what was typed', () => {
    expect(readUrlField('  ', '')).toMatchObject({ ok: false, field: 'url' });
    const wrong = readUrlField('mysql://me:hunter2@h/db', '');
    expect(wrong).toMatchObject({ ok: false, field: 'url' });
    expect(JSON.stringify(wrong)).not.toContain('hunter2');
    expect(readUrlField(' postgres://me:pw@h/db ', ' team ')).toEqual({ ok: true, url: 'postgres://me:pw@h/db', name: 'team' });
    expect(readUrlField('postgresql://h/db', '')).toEqual({ ok: true, url: 'postgresql://h/db' });
  });

  it('sets the board: the URL goes to the host once, the new store and a fresh snapshot come back', async () => {
    const { c, t, at } = await shown();
    t.on('thread.setBoard', () => ((at.store = SHARED), { store: SHARED, carried: null }));
    const before = t.callsOf('thread.snapshot').length;
    expect(await c.setBoard('postgres://me:pw@db.example/forkbench', 'team')).toBeNull();
    expect(t.callsOf('thread.setBoard')).toEqual([{ key: KEY, url: 'postgres://me:pw@db.example/forkbench', name: 'team' }]);
    expect(t.callsOf('thread.snapshot').length).toBe(before + 1);
    expect(c.state.boardStore).toEqual(SHARED);
    // Nothing the window keeps holds the URL.
    expect(JSON.stringify({ ...c.state, board: null })).not.toContain('me:pw');
  });

  it('a refusal comes back to the section, not the banner, and the store is unchanged', async () => {
    const { c, t } = await shown();
    t.on('thread.setBoard', () => {
      throw new HostCallError('board-unavailable', 'cannot open the board at db.example/forkbench: connection refused');
    });
    const refused = await c.setBoard('postgres://db.example/forkbench');
    expect(refused).toEqual({ code: 'board-unavailable', message: 'cannot open the board at db.example/forkbench: connection refused' });
    expect(c.state.errors).toEqual([]);
    expect(c.state.boardStore).toEqual({ kind: 'journal' });
  });

  it('back to the journal sends null', async () => {
    const { c, t, at } = await shown(SHARED);
    t.on('thread.setBoard', () => ((at.store = { kind: 'journal' }), { store: at.store, carried: null }));
    expect(await c.setBoard(null)).toBeNull();
    expect(t.callsOf('thread.setBoard')).toEqual([{ key: KEY, url: null }]);
    expect(c.state.boardStore).toEqual({ kind: 'journal' });
  });

  it('a move that copied the local board keeps what it carried for the panel, and sends the person’s choice', async () => {
    const { c, t, at } = await shown();
    const carried = { label: 'the local board of /p on h', copied: [['T-1', 'T-4'] as const], already: [], settings: false };
    t.on('thread.setBoard', () => ((at.store = SHARED), { store: SHARED, carried }));
    expect(await c.setBoard('postgres://db.example/forkbench', undefined, 'copy')).toBeNull();
    expect(t.callsOf('thread.setBoard')).toEqual([{ key: KEY, url: 'postgres://db.example/forkbench', move: 'copy' }]);
    expect(c.state.boardCarried).toEqual({ key: KEY, outcome: carried });
  });

  it('another window’s switch (the thread-reopened push) reloads the Thread shown', async () => {
    const { c, t, at } = await shown();
    at.store = SHARED;
    t.push({ type: 'thread-reopened', key: KEY });
    await settle();
    expect(c.state.boardStore).toEqual(SHARED);
    // About another Thread: nothing to reload.
    const n = t.callsOf('thread.snapshot').length;
    t.push({ type: 'thread-reopened', key: 'fedcba9876543210' });
    await settle();
    expect(t.callsOf('thread.snapshot').length).toBe(n);
  });
});
