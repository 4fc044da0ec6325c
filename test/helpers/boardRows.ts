import pg from 'pg';

/**
 * What a holder of a shared board's database role can do that no host does: append an event row of its own
 * making to the board named `name`, at the position after the head (or a few past it: `at: 'far'`), moving the
 * head with it unless told not to, and wake the hosts with the NOTIFY a host's write sends (`notify`; an
 * outsider need not, and hosts then find it by polling). `body` gets the position and the last event's board
 * clock, to stamp what it makes. Returns the position.
 */
export async function appendBySql(
  url: string,
  name: string,
  body: (seq: number, mono: number) => Record<string, unknown>,
  opts: { moveHead?: boolean; at?: 'next' | 'far'; notify?: boolean } = {},
): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ id: string; head: string }>('SELECT id, head FROM forkbench.boards WHERE name = $1', [name]);
    const { id, head } = rows[0]!;
    const last = await c.query<{ body: string }>('SELECT body FROM forkbench.events WHERE board_id = $1 AND seq = $2', [id, head]);
    const mono = (JSON.parse(last.rows[0]!.body) as { mono: number }).mono;
    const seq = Number(head) + (opts.at === 'far' ? 5 : 1);
    const e = { ...body(seq, mono), seq };
    const row = [id, seq, (e as { taskId?: string }).taskId ?? null, JSON.stringify(e)];
    const insert = 'INSERT INTO forkbench.events (board_id, seq, task_id, body) VALUES ($1, $2, $3, $4)';
    // One statement, as a host's append is: a host reading between an insert and a moved head would see neither.
    if (opts.moveHead === false) await c.query(insert, row);
    else await c.query(`WITH e AS (${insert}) UPDATE forkbench.boards SET head = $2 WHERE id = $1`, row);
    if (opts.notify) await c.query("SELECT pg_notify('forkbench_board', $1)", [`${id}:${seq}`]);
    return seq;
  } finally {
    await c.end();
  }
}
