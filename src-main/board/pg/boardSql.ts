import type { ClientBase } from 'pg';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import type { Rejection, Result } from '../../../src-shared/board/result.js';

/**
 * The SQL of a shared board, in one place: what a deciding transaction reads and writes, and what a host
 * reads to follow the others. Positions (`seq`, `head`) are bigint in the database and come back as strings;
 * they become JS numbers here only because a board's positions stay far below 2^53 (one event a millisecond
 * for 285,000 years).
 */

/** Rows fetched per read while following the log: a bounded memory cost for a host that was away long. */
const FOLLOW_BATCH = 5000;

/** The board's row, made on first use: its id is what every other table refers to. */
export async function boardIdFor(c: ClientBase, name: string): Promise<string> {
  await c.query('INSERT INTO forkbench.boards (name) VALUES ($1) ON CONFLICT (name) DO NOTHING', [name]);
  const r = await c.query<{ id: string }>('SELECT id FROM forkbench.boards WHERE name = $1', [name]);
  return (r.rows[0] as { id: string }).id;
}

/**
 * Take the board's lock for this transaction and say where its log ends; then the server's time and whether
 * this host's own lease still holds (a host past its lease acts for nobody, whatever it believes). Every writer
 * of every host takes the lock first, so positions are allocated one writer at a time and commit in order.
 * One round trip: the outer SELECT is evaluated for the row the CTE returns, which it returns only once the
 * lock is held, so clock_timestamp() is read after any wait for the lock (a time read in the locking scan
 * itself could predate the wait). This host's lease row is read with a lock too (FOR SHARE): a locking read
 * sees the row as last committed, where a plain one would see it as of the statement's start, before the
 * wait, and call a lease renewed meanwhile lapsed. Every round trip here is time the board is locked for
 * every host.
 */
export async function lockTimeAndLease(c: ClientBase, boardId: string, hostId: string, incarnation: string): Promise<{ head: number; now: number; hostLive: boolean; strays: StoredRow[]; quietMs: number }> {
  // `strays`: rows past the head. Every host's append moves the head in the statement that inserts its events,
  // so such a row was put there some other way (by hand, with the database's role); left there, it would take
  // the position the next append needs and every write of every host would fail on it. They are taken out,
  // under the lock, in the same round trip, and the caller sets them aside. `quiet`: how long the board has
  // shown no sign of life (outage.ts); the hosts' renewals are read as of the statement's start, so it may be
  // high by the wait for the lock, and the caller reads it again before acting on it.
  const r = await c.query<{ head: string; now: number; live: boolean; strays: Array<{ seq: string | number; body: string }>; quiet: number }>(
    `WITH locked AS (SELECT head, written_at FROM forkbench.boards WHERE id = $1 FOR UPDATE),
          me AS (SELECT incarnation, expires_at FROM forkbench.hosts WHERE board_id = $1 AND host_id = $2 FOR SHARE),
          strays AS (DELETE FROM forkbench.events WHERE board_id = $1 AND seq > (SELECT head FROM locked) RETURNING seq, body)
     SELECT locked.head, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now,
            coalesce((SELECT incarnation = $3 AND expires_at > clock_timestamp() FROM me), false) AS live,
            (SELECT coalesce(json_agg(json_build_object('seq', seq, 'body', body) ORDER BY seq), '[]'::json) FROM strays) AS strays,
            ${QUIET_MS('locked.written_at')} AS quiet
       FROM locked`,
    [boardId, hostId, incarnation],
  );
  const row = r.rows[0];
  if (!row) throw new Error(`board ${boardId} is gone from the database`);
  return { head: Number(row.head), now: row.now, hostLive: row.live, strays: row.strays.map((s) => ({ seq: Number(s.seq), body: s.body })), quietMs: row.quiet };
}

/**
 * SQL for how long, in ms, the board has shown no sign of life: since the later of its last committed write
 * (`writtenAt`, an expression over forkbench.boards) and the last renewal of any of its hosts (`$1` is the board).
 */
export const QUIET_MS = (writtenAt: string): string =>
  `(extract(epoch FROM clock_timestamp() - greatest(${writtenAt}, (SELECT max(renewed_at) FROM forkbench.hosts WHERE board_id = $1))) * 1000)::float8`;

/** One row of the board's log as stored: its position and its text, not yet read as an event. */
export interface StoredRow {
  readonly seq: number;
  readonly body: string;
}

/**
 * The rows after `after` up to the board's head, in order, a batch at a time, as stored: each is checked before
 * it is applied (storedEvents.ts). Rows past the head were put there by no host's append (see lockTimeAndLease).
 */
export async function rowsAfter(c: ClientBase, boardId: string, after: number, limit = FOLLOW_BATCH): Promise<StoredRow[]> {
  const r = await c.query<{ seq: string; body: string }>(
    `SELECT seq, body FROM forkbench.events
      WHERE board_id = $1 AND seq > $2 AND seq <= (SELECT head FROM forkbench.boards WHERE id = $1)
      ORDER BY seq LIMIT $3`,
    [boardId, after, limit],
  );
  return r.rows.map((row) => ({ seq: Number(row.seq), body: row.body }));
}

/** A stored event's text as an event, or null where it is not JSON (someone wrote it by hand): a log read skips it. */
function parsed(body: string): BoardEvent | null {
  try {
    return JSON.parse(body) as BoardEvent;
  } catch {
    return null;
  }
}
const bodies = (rows: Array<{ body: string }>): BoardEvent[] => rows.map((row) => parsed(row.body)).filter((e): e is BoardEvent => e !== null);

/** Events after `after`, in order, a batch at a time (the caller loops until it has reached the head). */
export async function eventsAfter(c: ClientBase, boardId: string, after: number, limit = FOLLOW_BATCH): Promise<BoardEvent[]> {
  const r = await c.query<{ body: string }>('SELECT body FROM forkbench.events WHERE board_id = $1 AND seq > $2 ORDER BY seq LIMIT $3', [boardId, after, limit]);
  return bodies(r.rows);
}

export async function eventsOfTask(c: ClientBase, boardId: string, taskId: string): Promise<BoardEvent[]> {
  const r = await c.query<{ body: string }>('SELECT body FROM forkbench.events WHERE board_id = $1 AND task_id = $2 ORDER BY seq', [boardId, taskId]);
  return bodies(r.rows);
}

/** Up to `limit` events below `before`, newest first, only `taskId`'s if given: a page of the log panel's
 *  history. A plain read on the primary key (or events_by_task): no lock, no transaction. */
export async function eventsBefore(c: ClientBase, boardId: string, before: number | null, limit: number, taskId?: string): Promise<BoardEvent[]> {
  const r = await c.query<{ body: string }>(
    `SELECT body FROM forkbench.events
      WHERE board_id = $1 AND ($2::bigint IS NULL OR seq < $2) AND ($3::text IS NULL OR task_id = $3)
      ORDER BY seq DESC LIMIT $4`,
    [boardId, before, taskId ?? null, limit],
  );
  return bodies(r.rows);
}

/** The board's oldest event: where its history begins (a shared board removes none, so its first). */
export async function firstEvent(c: ClientBase, boardId: string): Promise<BoardEvent | null> {
  const r = await c.query<{ body: string }>('SELECT body FROM forkbench.events WHERE board_id = $1 ORDER BY seq LIMIT 1', [boardId]);
  const row = r.rows[0];
  return row ? parsed(row.body) : null;
}

/** A key's stored first outcome, as a lookup finds it. */
export interface StoredKey {
  readonly agent: string;
  readonly key: string;
  readonly hash: string;
  readonly outcome: Result<unknown, Rejection>;
}

/** The stored outcomes of the keys a batch carries, in one read. */
export async function keysOf(c: ClientBase, boardId: string, wanted: ReadonlyArray<{ agentId: string; key: string }>): Promise<Map<string, StoredKey>> {
  if (!wanted.length) return new Map();
  const r = await c.query<{ agent_id: string; key: string; hash: string; outcome: string }>(
    `SELECT agent_id, key, hash, outcome FROM forkbench.write_keys
      WHERE board_id = $1 AND (agent_id, key) IN (SELECT * FROM unnest($2::text[], $3::text[]))`,
    [boardId, wanted.map((w) => w.agentId), wanted.map((w) => w.key)],
  );
  return keyMap(r.rows);
}

function keyMap(rows: ReadonlyArray<{ agent_id: string; key: string; hash: string; outcome: string }>): Map<string, StoredKey> {
  const out = new Map<string, StoredKey>();
  for (const row of rows) out.set(keyId(row.agent_id, row.key), { agent: row.agent_id, key: row.key, hash: row.hash, outcome: JSON.parse(row.outcome) as Result<unknown, Rejection> });
  return out;
}

/**
 * What a deciding transaction reads once it holds the board's lock, in one statement: the rows after `after`
 * up to the head (as rowsAfter, the first batch of them) and the stored outcomes of the batch's keys (as
 * keysOf). Sent right behind lockTimeAndLease (pipelined), it runs when the lock is held, on a snapshot taken
 * then, so it sees every commit before the lock and no row can land past the head it reads to: one round
 * trip under the lock where these were two, and where the other hosts wait for each.
 */
export async function rowsAndKeys(
  c: ClientBase,
  boardId: string,
  after: number,
  wanted: ReadonlyArray<{ agentId: string; key: string }>,
  limit = FOLLOW_BATCH,
): Promise<{ rows: StoredRow[]; keys: Map<string, StoredKey> }> {
  // One result set of two kinds of rows: a log row (seq, body) or a key (agent_id, key, hash; its outcome in body).
  const r = await c.query<{ seq: string | null; body: string; agent_id: string | null; key: string | null; hash: string | null }>(
    `(SELECT seq, body, NULL::text AS agent_id, NULL::text AS key, NULL::text AS hash FROM forkbench.events
       WHERE board_id = $1 AND seq > $2 AND seq <= (SELECT head FROM forkbench.boards WHERE id = $1)
       ORDER BY seq LIMIT $5)
     UNION ALL
     (SELECT NULL, outcome, agent_id, key, hash FROM forkbench.write_keys
       WHERE board_id = $1 AND (agent_id, key) IN (SELECT * FROM unnest($3::text[], $4::text[])))`,
    [boardId, after, wanted.map((w) => w.agentId), wanted.map((w) => w.key), limit],
  );
  const rows: StoredRow[] = [];
  const keys: Array<{ agent_id: string; key: string; hash: string; outcome: string }> = [];
  for (const row of r.rows) {
    if (row.seq !== null) rows.push({ seq: Number(row.seq), body: row.body });
    else keys.push({ agent_id: row.agent_id as string, key: row.key as string, hash: row.hash as string, outcome: row.body });
  }
  // UNION ALL promises no order across its branches; the log's rows are applied in order.
  rows.sort((x, y) => x.seq - y.seq);
  return { rows, keys: keyMap(keys) };
}

/** PostgreSQL's SQLSTATE for a division by zero: how keysUnseen's statement says a key was there. */
const DIVISION_BY_ZERO = '22012';

/** A write decided as new whose key the board had already stored: its transaction must not commit. */
export class KeySeenError extends Error {
  constructor() {
    super("a write that joined a transaction after its keys were read has a key the board already stored; the transaction is decided again with it read");
  }
}

/**
 * Fail, under the board's lock, if any of `wanted` is already a stored key, and so abort the transaction it
 * runs in (pipelined before its append and COMMIT: the COMMIT then rolls back). For writes decided without
 * their keys read first (pgBoard's late joiners). Plain SQL cannot raise an error of its own, so the statement
 * divides by zero when a key is found: not a constant (the planner would fold 1/0 and fail every time), but
 * the count of the keys found. KeySeenError is what the caller is thrown then.
 */
export async function keysUnseen(c: ClientBase, boardId: string, wanted: ReadonlyArray<{ agentId: string; key: string }>): Promise<void> {
  await c
    .query(
      `SELECT 1 / (count(*) = 0)::int FROM forkbench.write_keys
        WHERE board_id = $1 AND (agent_id, key) IN (SELECT * FROM unnest($2::text[], $3::text[]))`,
      [boardId, wanted.map((w) => w.agentId), wanted.map((w) => w.key)],
    )
    .catch((err: { code?: string }) => {
      throw err.code === DIVISION_BY_ZERO ? new KeySeenError() : err;
    });
}

/**
 * Run a transaction's statements in this order, and settle all of them: on a pipelining connection (pg's
 * `pipeline: true`, as connectPool makes) they are sent at once and cost one round trip; on any other, one
 * after another. The first failure is thrown once every statement has settled (a statement behind a failed
 * one fails too, "current transaction is aborted", and none is left unhandled). Each step must send its
 * statement as it is called, before any await of its own: that is what keeps them in this order on the wire.
 */
export async function inOrder<T extends readonly unknown[]>(c: ClientBase & { readonly pipeline?: boolean }, steps: { [K in keyof T]: () => Promise<T[K]> }): Promise<T> {
  const settled: PromiseSettledResult<unknown>[] = [];
  if (c.pipeline) settled.push(...(await Promise.allSettled(steps.map((s) => s()))));
  else
    for (const s of steps) {
      const [one] = await Promise.allSettled([s()]);
      settled.push(one as PromiseSettledResult<unknown>);
      if (one?.status === 'rejected') break;
    }
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

export const keyId = (agent: string, key: string): string => `${agent}\u0000${key}`;

/**
 * Append a transaction's decisions in one statement: its events at the positions after `head`, its keys'
 * first outcomes, the board's new head, and a wake-up for every host that listens (delivered at commit).
 */
export async function append(c: ClientBase, boardId: string, events: readonly BoardEvent[], keys: readonly StoredKey[]): Promise<void> {
  const head = events.length ? (events[events.length - 1] as BoardEvent).seq : null;
  await c.query(
    `WITH ev AS (
       INSERT INTO forkbench.events (board_id, seq, task_id, body)
       SELECT $1, s, t, b FROM unnest($2::bigint[], $3::text[], $4::text[]) AS x(s, t, b)
     ), k AS (
       INSERT INTO forkbench.write_keys (board_id, agent_id, key, hash, outcome)
       SELECT $1, a, k, h, o FROM unnest($5::text[], $6::text[], $7::text[], $8::text[]) AS y(a, k, h, o)
     )
     UPDATE forkbench.boards SET head = coalesce($9::bigint, head), written_at = clock_timestamp() WHERE id = $1
     RETURNING pg_notify('${NOTIFY_CHANNEL}', id::text || ':' || head::text)`,
    [
      boardId,
      events.map((e) => e.seq),
      events.map((e) => (e as { taskId?: string | null }).taskId ?? null),
      events.map((e) => JSON.stringify(e)),
      keys.map((k) => k.agent),
      keys.map((k) => k.key),
      keys.map((k) => k.hash),
      keys.map((k) => JSON.stringify(k.outcome)),
      head,
    ],
  );
}

/** The channel every host of every board listens on: a payload names the board and its new head. */
export const NOTIFY_CHANNEL = 'forkbench_board';
