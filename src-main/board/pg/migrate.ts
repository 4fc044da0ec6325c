/**
 * Brings a database's Forkbench schema up to this build's (schema.ts), at every start of a host on PostgreSQL.
 *
 * Several hosts, on several machines, may start against one fresh database at the same moment, so each
 * migration runs in one transaction that first takes a transaction-scoped advisory lock: the first host applies,
 * the others wait on the lock and then see the version recorded. Transaction-scoped (not session) so it works
 * through a transaction-mode pooler, and it is released by the commit or rollback whatever happens.
 *
 * Each applied migration is recorded in `forkbench.schema_version` with the sha256 of its SQL: a released
 * migration edited afterwards (a recorded checksum that differs) is refused, and so is a database migrated by a
 * newer Forkbench than this one, which would otherwise write rows the newer code does not expect.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { MIGRATIONS, SCHEMA, type Migration } from './schema.js';

/**
 * The advisory lock's key: the ASCII bytes of "Forkbenc" read as one int8 (0x466f726b62656e63). Advisory keys
 * are one namespace per database, shared with every other application in it; a key spelled from our own name is
 * unlikely to be anyone else's, unlike 1 or 42. Passed as a string: it is beyond a JS number's exact range.
 */
export const MIGRATION_LOCK_KEY = '5075401110607720035';

/** A database whose Forkbench schema this build must not touch: newer, edited or unknown migrations. */
export class SchemaVersionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SchemaVersionError';
  }
}

export interface MigrateResult {
  /** The versions this call applied (empty when another host had, or they were there already). */
  readonly applied: readonly number[];
  /** The database's schema version afterwards. */
  readonly version: number;
}

export const checksumOf = (sql: string): string => createHash('sha256').update(sql, 'utf8').digest('hex');

interface Recorded {
  version: number;
  name: string;
  checksum: string;
}

/**
 * Applies every migration the database lacks, each in its own locked transaction. `where` names the database in
 * messages ("host/database", never a user or password: see connection.ts's describeBoardUrl); by default it is
 * read from the client. `migrations` is for tests; a host always uses the build's own.
 */
export async function migrate(client: pg.ClientBase, o: { where?: string; migrations?: readonly Migration[] } = {}): Promise<MigrateResult> {
  const migrations = [...(o.migrations ?? MIGRATIONS)].sort((a, b) => a.version - b.version);
  const where = o.where ?? `${(client as { host?: string }).host ?? '?'}/${(client as { database?: string }).database ?? '?'}`;
  const applied: number[] = [];
  for (;;) {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
      // Inside the locked transaction: two hosts creating them at once would otherwise race on the catalog.
      // Looked up first rather than only `IF NOT EXISTS`, which checks the CREATE privilege before existence:
      // a role a DBA gave only the schema's own rights could then never start.
      const exists = await client.query<{ has_schema: boolean; has_table: boolean }>(
        `SELECT to_regnamespace($1) IS NOT NULL AS has_schema, to_regclass($2) IS NOT NULL AS has_table`,
        [SCHEMA, `${SCHEMA}.schema_version`],
      );
      if (!exists.rows[0]!.has_schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
      if (!exists.rows[0]!.has_table) {
        await client.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA}.schema_version (
          version integer PRIMARY KEY,
          name text NOT NULL,
          checksum text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
        )`);
      }
      // Read after the lock: under READ COMMITTED this statement sees what a host that held the lock committed.
      const recorded = (await client.query<Recorded>(`SELECT version, name, checksum FROM ${SCHEMA}.schema_version ORDER BY version`)).rows;
      check(recorded, migrations, where);
      const done = new Set(recorded.map((r) => r.version));
      const next = migrations.find((m) => !done.has(m.version));
      if (!next) {
        await client.query('COMMIT');
        return { applied, version: recorded.length ? recorded[recorded.length - 1]!.version : 0 };
      }
      try {
        await client.query(next.sql);
      } catch (err) {
        throw new Error(`migration ${next.version} (${next.name}) failed on ${where}: ${(err as Error).message}`, { cause: err });
      }
      await client.query(`INSERT INTO ${SCHEMA}.schema_version (version, name, checksum) VALUES ($1, $2, $3)`, [next.version, next.name, checksumOf(next.sql)]);
      await client.query('COMMIT');
      applied.push(next.version);
    } catch (err) {
      // A failed rollback (the connection is gone) must not hide why we rolled back.
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }
}

/** Refuses a database this build must not write to: see SchemaVersionError. */
function check(recorded: readonly Recorded[], migrations: readonly Migration[], where: string): void {
  const known = migrations.length ? migrations[migrations.length - 1]!.version : 0;
  const newest = recorded.length ? recorded[recorded.length - 1]!.version : 0;
  if (newest > known) {
    throw new SchemaVersionError(`this Forkbench knows schema version ${known}; the database at ${where} has version ${newest}: upgrade Forkbench`);
  }
  const byVersion = new Map(migrations.map((m) => [m.version, m]));
  for (const r of recorded) {
    const m = byVersion.get(r.version);
    if (!m) throw new SchemaVersionError(`the database at ${where} records schema migration ${r.version} (${r.name}), which this Forkbench does not have: it was made by another build`);
    if (r.checksum !== checksumOf(m.sql)) {
      throw new SchemaVersionError(
        `schema migration ${r.version} (${m.name}) in the database at ${where} differs from this Forkbench's (checksum ${r.checksum.slice(0, 12)}… there, ${checksumOf(m.sql).slice(0, 12)}… here): a released migration was edited; add a new one instead`,
      );
    }
  }
}
