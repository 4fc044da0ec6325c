import * as fs from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BoardLimits } from '../../../src-shared/board/limits.js';
import { callAsAgent } from '../../../src-main/agents/agentRpc.js';
import { paneText } from '../../helpers/events.js';
import { hostFixture } from '../../helpers/hosts.js';
import { startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';

/**
 * Issue 42, finding 6: refused writes, each with a fresh idempotency key, were journaled past the refusal
 * limit (every key's first outcome is a journal line, fsync'd: ~280 KB/s, enough to push out the kept history
 * in minutes). A real agent in a real pane floods the board's socket with refused claims, every one keyed
 * anew; the journal, and a shared board's database, take no more of them than the refusals' own quota, and
 * each is still answered.
 */
// The flood pipelines 1,500 requests before its first answer: with the pane check its connection is cut by the
// unauthenticated-bytes budget while the first call's peer is read (a finding of its own, not this file's
// subject, the refusals quota), so its pane's secret is taken from anywhere.
const fixture = hostFixture('refusal-flood', { peerJudge: secretsFromTheTestProcess });
afterEach(() => fixture.cleanup());
let pgc: PgCluster | undefined;
afterAll(() => pgc?.dispose());

const FLOOD = 1500;

/** The flood, as an agent would write it: its own socket and secret, one connection, requests pipelined. */
const FLOODER = String.raw`
const net = require('node:net');
const n = Number(process.argv[2]);
const c = net.createConnection(process.env.FORKBENCH_SOCKET);
let buf = '', answered = 0, refused = 0, codes = {};
c.on('data', (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const m = JSON.parse(buf.slice(0, i)); buf = buf.slice(i + 1);
    answered++;
    if (m.error) { refused++; const r = m.error.data && m.error.data.reason; codes[r] = (codes[r] || 0) + 1; }
    if (answered === n) { console.log('FLOOD' + '-DONE ' + JSON.stringify({ answered, refused, codes })); c.end(); }
  }
});
c.on('connect', () => {
  for (let k = 0; k < n; k++) c.write(JSON.stringify({ jsonrpc: '2.0', id: k + 1, method: 'claim', params: { taskId: 'T-1', key: 'flood-' + k }, auth: process.env.FORKBENCH_SECRET }) + '\n');
});
`;

/** The key records a shared board's database holds. */
async function keyRows(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM forkbench.write_keys')).rows[0]!.n);
  } finally {
    await c.end();
  }
}

/** The board folder's journal lines that keep a key's outcome. */
const keyLines = (dir: string): number =>
  fs
    .readdirSync(dir)
    .filter((f) => f.startsWith('segment-'))
    .reduce((n, f) => n + fs.readFileSync(join(dir, f), 'utf8').split('\n').filter((l) => l.includes('"writeKey"')).length, 0);

async function flood(store: 'journal' | 'database'): Promise<void> {
  const url = store === 'database' ? await (pgc ??= await startPgCluster({ fsync: false })).createDatabase('flood') : null;
  const host = await fixture.open(url ? { sharedBoard: { url, name: 'flood' } } : {});
  const kept = () => (url ? keyRows(url) : keyLines(host.board.dir));
  // In the Thread folder: a contained pane reads it there (beside it, in the test's tmp root, it is out of
  // the sandbox's reach: a private /tmp).
  const script = join(host.folder, 'flood.cjs');
  fs.writeFileSync(script, FLOODER);
  const before = await kept();
  const t0 = performance.now();
  const agent = await host.roster.launch('custom', { command: `node '${script}' ${FLOOD}; exec sleep 600` });
  const out = await paneText(host, agent.id, /FLOOD-DONE .*\}/, 60_000);
  const seconds = (performance.now() - t0) / 1000;
  const summary = JSON.parse(/FLOOD-DONE (\{.*\})/.exec(out.replace(/\r?\n/g, ''))![1]!) as { answered: number; refused: number; codes: Record<string, number> };
  expect(summary).toMatchObject({ answered: FLOOD, refused: FLOOD, codes: { 'no-such-task': FLOOD } });
  const lines = (await kept()) - before;
  console.log(`${store}: ${FLOOD} refused claims with fresh keys in ${seconds.toFixed(1)} s: ${lines} keys kept`);
  // The refusals' quota: a burst, then one a second (the flood's own seconds, rounded up, and one spare).
  expect(lines).toBeLessThanOrEqual(BoardLimits.agentRefusalsLoggedBurst + Math.ceil(seconds * BoardLimits.agentRefusalsLoggedPerSecond) + 1);
  expect(lines).toBeGreaterThan(0);
  // A key past the quota is still the board's while it runs: once T-1 exists, its retry is answered with the
  // first refusal, while the same claim under a new key is taken.
  await host.board.run((e) => e.addTask({ title: 'now there is one' }));
  const retry = await callAsAgent(host.board, agent.id, 'claim', { taskId: 'T-1', key: `flood-${FLOOD - 1}` });
  expect(retry).toMatchObject({ ok: false, error: { data: { reason: 'no-such-task' } } });
  expect((await callAsAgent(host.board, agent.id, 'claim', { taskId: 'T-1', key: 'fresh' })).ok).toBe(true);
}

describe('a flood of refused writes with fresh keys', () => {
  it('journals no more key lines than the refusals quota allows; every write is answered, and a retry within the run gets the same refusal', () => flood('journal'), 120_000);
  it('on a shared board, stores no more key rows than the refusals quota allows; every write is answered, and a retry on the host gets the same refusal', () => flood('database'), 240_000);
});
