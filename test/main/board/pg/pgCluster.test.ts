/**
 * The tests' private PostgreSQL server (test/helpers/pgCluster.ts): it really starts, answers on its own Unix
 * socket only, survives a crash with committed data intact, can be taken away and brought back, and leaves
 * nothing behind — neither when disposed nor when a test process exits without disposing it.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPgBinDir, running as alive, startPgCluster, type PgCluster } from '../../../helpers/pgCluster.js';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..');

async function query<T = Record<string, unknown>>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}

describe('a private PostgreSQL server for tests', () => {
  let pgc: PgCluster;
  beforeAll(async () => {
    pgc = await startPgCluster();
  });
  afterAll(() => pgc?.dispose());

  it('answers on its own Unix socket only, durable by default', async () => {
    expect(pgc.url('x')).toMatch(/^postgresql:\/\/postgres@\/x\?host=/);
    const [row] = await query<{ v: string; addr: string | null; fsync: string; listen: string }>(
      pgc.url(),
      `SELECT version() AS v, inet_server_addr()::text AS addr, current_setting('fsync') AS fsync, current_setting('listen_addresses') AS listen`,
    );
    expect(row!.v).toMatch(/^PostgreSQL \d+/);
    // A Unix-socket connection has no server address; no TCP listener exists at all.
    expect(row!.addr).toBeNull();
    expect(row!.listen).toBe('');
    expect(row!.fsync).toBe('on');
    expect(fs.readdirSync(pgc.socketDir)).toContain('.s.PGSQL.5432');
  });

  it('makes databases', async () => {
    const url = await pgc.createDatabase('board one');
    const [row] = await query<{ db: string }>(url, 'SELECT current_database() AS db');
    expect(row!.db).toBe('board one');
  });

  it('restartImmediate is a crash: recovery replays the WAL and committed rows are there', async () => {
    const url = await pgc.createDatabase('crash');
    await query(url, 'CREATE TABLE t (n int)');
    await query(url, 'INSERT INTO t SELECT generate_series(1, 1000)');
    const before = pgc.pid();
    await pgc.restartImmediate();
    expect(pgc.pid()).not.toBe(before);
    // The server itself says it was not shut down cleanly and recovered.
    expect(pgc.log()).toMatch(/not properly shut down; automatic recovery in progress/);
    const [row] = await query<{ n: string }>(url, 'SELECT count(*) AS n FROM t');
    // count(*) is int8: pg hands it over as a string, never a JS number.
    expect(row!.n).toBe('1000');
  });

  it('stopServer makes it unreachable until startServer', async () => {
    const pid = pgc.pid()!;
    await pgc.stopServer();
    expect(alive(pid)).toBe(false);
    await expect(query(pgc.url(), 'SELECT 1')).rejects.toThrow(/ENOENT|ECONNREFUSED/);
    await pgc.startServer();
    expect(await query(pgc.url(), 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});

describe('its lifetime', () => {
  it('dispose stops the server and removes every folder', async () => {
    const c = await startPgCluster({ fsync: false });
    const [row] = await query<{ fsync: string }>(c.url(), `SELECT current_setting('fsync') AS fsync`);
    expect(row!.fsync).toBe('off');
    const pid = c.pid()!;
    expect(alive(pid)).toBe(true);
    await c.dispose();
    expect(alive(pid)).toBe(false);
    expect(fs.existsSync(c.root)).toBe(false);
  });

  it('a test process that exits without dispose leaves no server and no folder behind', async () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-pgexit-'));
    try {
      const script = join(dir, 'forget.mts');
      fs.writeFileSync(
        script,
        `import { startPgCluster } from ${JSON.stringify(join(ROOT, 'test', 'helpers', 'pgCluster.ts'))};\n` +
          `const c = await startPgCluster({ fsync: false });\n` +
          `console.log(JSON.stringify({ root: c.root, pid: c.pid() }));\n` +
          `process.exit(0);\n`,
      );
      const out = execFileSync(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, encoding: 'utf8' });
      const { root, pid } = JSON.parse(out.trim().split('\n').pop()!) as { root: string; pid: number };
      expect(pid).toBeGreaterThan(0);
      expect(alive(pid)).toBe(false);
      expect(fs.existsSync(root)).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with no PostgreSQL installed, says .ci/run installs it (never a skip)', () => {
    expect(() => findPgBinDir('/nonexistent-pg-root', '/nonexistent-bin')).toThrow(/PostgreSQL is not installed.*\.ci\/run.*apt-get install -y postgresql/);
  });
});
