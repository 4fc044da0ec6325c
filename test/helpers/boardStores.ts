import fs from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { BoardService } from '../../src-main/board/boardService.js';
import { JournalBoard } from '../../src-main/board/journalBoard.js';
import { PgBoard } from '../../src-main/board/pg/pgBoard.js';
import { startPgCluster, type PgCluster } from './pgCluster.js';

/**
 * A feature's state through both board stores, the set-up of the `…Stores` tests: a journal reopened from its
 * events or from a snapshot, and hosts on one PostgreSQL board (a private cluster, started once per file).
 * Call at a test file's top level: it registers the file's hooks.
 */
export function boardStores(name: string) {
  let pgc: PgCluster;
  const dirs: string[] = [];
  const closers: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    pgc = await startPgCluster();
  });
  afterAll(() => pgc?.dispose());
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  const tmp = () => {
    const d = fs.mkdtempSync(join(os.tmpdir(), `fb-${name}-`));
    dirs.push(d);
    return d;
  };
  return {
    /** A journal board written by `build`, closed, and opened again (compactEvery 2: from a snapshot, whose
     *  tasks are compact, rather than from its events): what `expectKept` finds there. */
    async reopened(build: (b: BoardService) => Promise<void>, expectKept: (b: BoardService) => Promise<void>, compactEvery?: number): Promise<void> {
      const dir = tmp();
      const first = await JournalBoard.open({ dir, threadId: name, compactEvery });
      await build(first);
      await first.close();
      if (compactEvery) expect(fs.readdirSync(dir).some((f) => f.includes('snapshot'))).toBe(true);
      const second = await JournalBoard.open({ dir, threadId: name });
      closers.push(() => second.close());
      await expectKept(second);
    },
    /** A new database on the cluster, and a function opening a host on it. */
    async shared(): Promise<(hostId: string) => Promise<PgBoard>> {
      const url = await pgc.createDatabase(name);
      return async (hostId: string) => {
        const pool = new pg.Pool({ connectionString: url, max: 4, pipeline: true });
        pool.on('error', () => undefined);
        const board = await PgBoard.open({
          pool,
          listenClient: () => new pg.Client({ connectionString: url }),
          name,
          dir: tmp(),
          hostId,
          hostName: hostId,
          threadId: `thread-${name}`,
          goal: '',
          warn: () => undefined,
        });
        closers.push(() => pool.end(), () => board.close());
        return board;
      };
    },
  };
}
