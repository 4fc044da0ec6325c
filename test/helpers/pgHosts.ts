import fs from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { PgBoard, type PgBoardOptions } from '../../src-main/board/pg/pgBoard.js';
import { startPgCluster, type PgCluster, type PgClusterOptions } from './pgCluster.js';

/** What a test file's PgBoard hosts share: one server, fresh databases, and folders removed after each test. */
export interface PgHosts {
  /** The file's server (started in its beforeAll). */
  readonly pgc: PgCluster;
  /** A new database of the file's server, named for the file's own count. */
  freshDb(): Promise<string>;
  /** A host on the board in the database at `url`: a pool and a data folder of its own, as another machine. */
  host(url: string, hostId: string, extra?: Partial<PgBoardOptions>): Promise<PgBoard>;
  /** A folder removed after the test. */
  tmp(prefix: string): string;
}

/**
 * PgBoards on a real PostgreSQL for one test file: registers the file's hooks (the server started once, every
 * board and pool closed and every folder removed after each test) and opens hosts with `defaults` under each
 * one's own options.
 */
export function pgHostsForFile(defaults: Omit<PgBoardOptions, 'pool' | 'dir' | 'hostId' | 'hostName'>, server: PgClusterOptions = {}): PgHosts {
  let pgc: PgCluster | undefined;
  let dbCount = 0;
  const open: Array<{ board: PgBoard; pool: pg.Pool }> = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    pgc = await startPgCluster(server);
  });
  afterAll(() => pgc?.dispose());
  afterEach(async () => {
    for (const { board, pool } of open.splice(0)) {
      await board.close();
      await pool.end();
    }
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  const tmp = (prefix: string): string => {
    const d = fs.mkdtempSync(join(os.tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
  return {
    get pgc(): PgCluster {
      if (!pgc) throw new Error('the PostgreSQL server starts in the file’s beforeAll');
      return pgc;
    },
    freshDb: () => (pgc as PgCluster).createDatabase(`b${++dbCount}`),
    tmp,
    async host(url, hostId, extra = {}) {
      const pool = new pg.Pool({ connectionString: url, max: 4, pipeline: true });
      pool.on('error', () => undefined);
      const board = await PgBoard.open({
        pool,
        listenClient: () => new pg.Client({ connectionString: url }),
        dir: tmp('fb-pghost-'),
        hostId,
        hostName: hostId,
        warn: () => undefined,
        ...defaults,
        ...extra,
      });
      open.push({ board, pool });
      return board;
    },
  };
}
