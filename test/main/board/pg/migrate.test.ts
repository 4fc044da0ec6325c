/**
 * The board's schema migrations on a real PostgreSQL: applied once, in order, each in its own locked
 * transaction; two hosts migrating one fresh database at once both succeed; a database this build must not
 * touch (newer, or a released migration edited) is refused with a clear message and left as it was.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checksumOf, migrate, MIGRATION_LOCK_KEY, SchemaVersionError } from '../../../../src-main/board/pg/migrate.js';
import { MIGRATIONS, type Migration } from '../../../../src-main/board/pg/schema.js';
import { startPgCluster, type PgCluster } from '../../../helpers/pgCluster.js';

let pgc: PgCluster;
const clients: pg.Client[] = [];
let dbCount = 0;

beforeAll(async () => {
  // fsync off: these tests are about the migrations' logic and locks, not durability (pgCluster.test.ts).
  pgc = await startPgCluster({ fsync: false });
});
afterAll(() => pgc?.dispose());
afterEach(async () => {
  for (const c of clients.splice(0)) await c.end().catch(() => undefined);
});

/** A fresh database and `n` connections to it. */
async function freshDb(n = 1): Promise<{ db: string; conns: pg.Client[] }> {
  const db = `m${++dbCount}`;
  const url = await pgc.createDatabase(db);
  const conns: pg.Client[] = [];
  for (let i = 0; i < n; i++) {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    clients.push(c);
    conns.push(c);
  }
  return { db, conns };
}

const versions = async (c: pg.Client) =>
  (await c.query<{ version: number; name: string; checksum: string }>('SELECT version, name, checksum FROM forkbench.schema_version ORDER BY version')).rows;
const tables = async (c: pg.Client) =>
  (await c.query<{ t: string }>(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'forkbench' ORDER BY 1`)).rows.map((r) => r.t);

/** The build's migrations, and test migrations numbered after its last: a build that adds one moves them on. */
const BUILT = MIGRATIONS.map((m) => m.version);
const LAST = BUILT.at(-1)!;
const V2: Migration = { version: LAST + 1, name: 'later', sql: 'CREATE TABLE forkbench.later (n int);' };

describe('migrate', () => {
  it('applies the build’s migrations to a fresh database, recording each with its checksum', async () => {
    const { conns: [c] } = await freshDb();
    expect(await migrate(c!)).toEqual({ applied: MIGRATIONS.map((m) => m.version), version: MIGRATIONS.at(-1)!.version });
    expect(await tables(c!)).toEqual(['agents', 'boards', 'events', 'hosts', 'schema_version', 'write_keys']);
    expect(await versions(c!)).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name, checksum: checksumOf(m.sql) })));
  });

  it('re-run is a no-op', async () => {
    const { conns: [c] } = await freshDb();
    await migrate(c!);
    const before = await versions(c!);
    expect(await migrate(c!)).toEqual({ applied: [], version: MIGRATIONS.at(-1)!.version });
    expect(await versions(c!)).toEqual(before);
  });

  it('applies only what is missing, in order', async () => {
    const { conns: [c] } = await freshDb();
    await migrate(c!);
    const V3: Migration = { version: LAST + 2, name: 'third', sql: 'ALTER TABLE forkbench.later ADD COLUMN m int;' };
    // Given out of order: V3 depends on V2's table.
    expect(await migrate(c!, { migrations: [...MIGRATIONS, V3, V2] })).toEqual({ applied: [LAST + 1, LAST + 2], version: LAST + 2 });
    expect((await versions(c!)).map((r) => r.version)).toEqual([...BUILT, LAST + 1, LAST + 2]);
  });

  it('hosts migrating one fresh database at once all succeed: one applies, the others see it done', async () => {
    const { conns } = await freshDb(4);
    // A migration slow enough that all four are certainly inside migrate() together.
    const slow: Migration = { version: LAST + 1, name: 'slow', sql: 'SELECT pg_sleep(0.3); CREATE TABLE forkbench.later (n int);' };
    const results = await Promise.all(conns.map((c) => migrate(c, { migrations: [...MIGRATIONS, slow] })));
    expect(results.map((r) => r.version)).toEqual([LAST + 1, LAST + 1, LAST + 1, LAST + 1]);
    // Every version applied exactly once across the four.
    expect(results.flatMap((r) => r.applied).sort((x, y) => x - y)).toEqual([...BUILT, LAST + 1]);
    expect((await versions(conns[0]!)).map((r) => r.version)).toEqual([...BUILT, LAST + 1]);
  });

  it('host names (issue 45): hosts of one name from before are told apart by their ids, and the database then refuses a second live host of a name', async () => {
    const { conns: [c] } = await freshDb();
    await migrate(c!, { migrations: MIGRATIONS.filter((m) => m.version === 1) });
    const board = (await c!.query<{ id: string }>(`INSERT INTO forkbench.boards (name) VALUES ('b') RETURNING id`)).rows[0]!.id;
    const host = (id: string, name: string) => c!.query(`INSERT INTO forkbench.hosts (board_id, host_id, incarnation, name, expires_at) VALUES ($1, $2, 'i', $3, clock_timestamp())`, [board, id, name]);
    for (const id of ['h-1', 'h-2']) await host(id, 'buildbox');
    await host('h-3', 'laptop');
    await migrate(c!);
    const names = (await c!.query<{ host_id: string; name: string }>('SELECT host_id, name FROM forkbench.hosts ORDER BY host_id')).rows;
    expect(names).toEqual([
      { host_id: 'h-1', name: 'buildbox-h-1' },
      { host_id: 'h-2', name: 'buildbox-h-2' },
      { host_id: 'h-3', name: 'laptop' },
    ]);
    await expect(host('h-4', 'laptop')).rejects.toMatchObject({ code: '23505', constraint: 'hosts_name_unique' });
  });

  it('locks with the key its comment spells ("Forkbenc" as an int8)', () => {
    expect(BigInt(MIGRATION_LOCK_KEY)).toBe(BigInt('0x' + Buffer.from('Forkbenc', 'ascii').toString('hex')));
  });

  it('refuses a database migrated by a newer Forkbench, naming both versions, and changes nothing', async () => {
    const { db, conns: [c] } = await freshDb();
    await migrate(c!, { migrations: [...MIGRATIONS, V2] });
    const err = await migrate(c!).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaVersionError);
    expect((err as Error).message).toBe(`this Forkbench knows schema version ${LAST}; the database at ${pgc.socketDir}/${db} has version ${LAST + 1}: upgrade Forkbench`);
    expect((await versions(c!)).map((r) => r.version)).toEqual([...BUILT, LAST + 1]);
    // The lock's transaction ended: the connection is usable, not stuck in an aborted transaction.
    expect((await c!.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('names the database as the caller describes it', async () => {
    const { conns: [c] } = await freshDb();
    await migrate(c!, { migrations: [...MIGRATIONS, V2] });
    await expect(migrate(c!, { where: 'db.example.com/boards' })).rejects.toThrow(`the database at db.example.com/boards has version ${LAST + 1}`);
  });

  it('refuses a released migration whose SQL changed since it was applied', async () => {
    const { conns: [c] } = await freshDb();
    await migrate(c!, { migrations: [...MIGRATIONS, V2] });
    const edited: Migration = { ...V2, sql: 'CREATE TABLE forkbench.later (n bigint);' };
    const V3: Migration = { version: LAST + 2, name: 'third', sql: 'CREATE TABLE forkbench.third (n int);' };
    await expect(migrate(c!, { migrations: [...MIGRATIONS, edited, V3] })).rejects.toThrow(
      new RegExp(`schema migration ${LAST + 1} \\(later\\) in the database at .* differs from this Forkbench's .*a released migration was edited`),
    );
    // Refused before anything: V3 was not applied.
    expect((await versions(c!)).map((r) => r.version)).toEqual([...BUILT, LAST + 1]);
    expect(await tables(c!)).not.toContain('third');
  });

  it('a failing migration leaves nothing of itself behind and says which one failed', async () => {
    const { conns: [c] } = await freshDb();
    const bad: Migration = { version: LAST + 1, name: 'broken', sql: 'CREATE TABLE forkbench.half (n int); CREATE TABLE oops (;' };
    await expect(migrate(c!, { migrations: [...MIGRATIONS, bad] })).rejects.toThrow(new RegExp(`^migration ${LAST + 1} \\(broken\\) failed on .*syntax error`));
    expect((await versions(c!)).map((r) => r.version)).toEqual(BUILT);
    expect(await tables(c!)).not.toContain('half');
    // Fixed, it applies.
    expect((await migrate(c!, { migrations: [...MIGRATIONS, V2] })).applied).toEqual([LAST + 1]);
  });
});
