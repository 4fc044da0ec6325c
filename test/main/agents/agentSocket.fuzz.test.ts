/**
 * Issue 16: a bounded fuzz of the agents' socket. A few hundred runs, each a fresh connection carrying a
 * handful of hostile frames, sent in random chunk sizes: random bytes, random JSON, requests with wrong types
 * in every field, huge ids, JSON nested thousands deep, valid method names with garbage params, wrong,
 * missing, revoked and foreign secrets, and a line left unfinished. Every complete line must get a JSON-RPC error (never a result), and
 * nothing may reach the board: no event at all, so no task, claim or note. Afterwards the host still answers
 * a normal call. The seed is fixed and printed on failure; FUZZ_SEED=<n> replays or explores another.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../../src-main/agents/agent.js';
import { AgentRegistry } from '../../../src-main/agents/agentRegistry.js';
import { AgentSocket, socketPathFor } from '../../../src-main/agents/agentSocket.js';
import { runtimeDir } from '../../../src-main/agents/runtimeDir.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { type BoardService } from '../../../src-main/board/boardService.js';
import { RpcClient } from '../../../src-main/cli/rpcClient.js';
import { AGENT_METHOD_NAMES } from '../../../src-shared/protocol/agentMethods.js';
import { ConnectionLimits } from '../../../src-main/agents/connectionBudget.js';

const SEED = Number(process.env.FUZZ_SEED ?? 160_016);
/** Runs: each is one connection of up to 5 frames plus an optional unfinished line; ~15 ms apiece here. */
const RUNS = 300;
/** A run whose complete lines are not all answered by then is a hang, not a slow host. */
const ANSWER_TIMEOUT_MS = 5_000;
/** After the answers, how long an unfinished line gets to (wrongly) produce one before the connection goes. */
const PARTIAL_GRACE_MS = 10;

let root: string;
let board: BoardService;
let registry: AgentRegistry;
let socket: AgentSocket;
let agent: Agent;
let revoked: Agent;
let exited: Agent;
/** An agent of another host: a well-formed secret this host never issued. */
let foreign: Agent;
let token: number;

beforeAll(async () => {
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-fuzz-'));
  board = await JournalBoard.open({ dir: join(root, 'board'), threadId: 'fuzz' });
  for (const title of ['held', 'open', 'also open']) await board.run((e) => e.addTask({ title }));
  registry = new AgentRegistry();
  agent = registry.create('shell', 'A', 0);
  revoked = registry.create('shell', 'R', 0);
  exited = registry.create('shell', 'X', 0);
  agent.started(process.pid);
  revoked.started(process.pid);
  exited.ended();
  registry.forgetSecret(revoked.id);
  foreign = new AgentRegistry().create('shell', 'F', 0);
  // A live claim with a note, so that valid-looking writes have something real to aim at.
  const claim = await board.run((e) => e.claim(agent.id, 'T-1'));
  if (!claim.ok) throw new Error(claim.error.message);
  token = claim.value.token;
  await board.run((e) => e.note(agent.id, 'T-1', 'before the fuzz', token));
  socket = await AgentSocket.listen(socketPathFor(runtimeDir(join(root, 'run')), 'fuzz'), registry, board);
});
afterAll(async () => {
  await socket.close();
  await board.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** The board as plain data: every task with its state, claim and notes, and the event sequence number. */
function snapshot(): string {
  const s = board.state;
  return JSON.stringify({ seq: s.seq, goal: s.goal, nextToken: s.nextToken, tasks: [...s.tasks.values()] });
}

// ---- frames ------------------------------------------------------------------------------------------

/** Any JSON value but a string (for string fields) or but a number (for number fields). */
const notString = fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.jsonValue(), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue(), { maxKeys: 3 }));
const notNumber = fc.oneof(fc.string({ maxLength: 20 }), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }));
/** A number that is no fencing token: zero, negative, fractional, unsafe, or (as raw text below) infinite. */
const badToken = fc.oneof(fc.constantFrom(0, -1, 0.5, Number.MAX_SAFE_INTEGER + 2, -Number.MAX_VALUE), notNumber);
/** A taskId that is not one: wrong type, or a string not shaped T-<digits>. */
const badTaskId = fc.oneof(notString, fc.string({ maxLength: 40 }).filter((s) => !/^T-\d{1,9}$/.test(s)), fc.constantFrom('T-', 'T-1 ', 't-1', 'T-1234567890', 'T-1\n'));

/** Params of which every known field has a wrong type or shape, and at least one field is present. */
const garbageParams = fc
  .record(
    { taskId: badTaskId, token: badToken, text: notString, note: notString, title: notString, body: notString, unknown: fc.jsonValue() },
    { requiredKeys: [] },
  )
  .filter((p) => Object.keys(p).length > 0);

/** Params a write would accept: offered only with a secret that must not work. */
const validParams = fc.constantFrom<Record<string, unknown>>(
  {},
  { taskId: 'T-2' },
  { title: 'created by the fuzz' },
  { taskId: 'T-1', token: 1, text: 'note by the fuzz' },
  { taskId: 'T-1', token: 1 },
  { taskId: 'T-1', token: 1, title: 'renamed by the fuzz' },
).map((p) => ('token' in p ? { ...p, token } : p));

/** Any secret but a live one of this host. */
const badSecret = fc.oneof(
  fc.constant(undefined),
  fc.string({ maxLength: 64 }),
  fc.constant(''),
  fc.constant('x'.repeat(300)),
  notString,
  fc.constantFrom('revoked', 'exited', 'foreign', 'truncated', 'extended', 'case').map((k) => {
    const s = agent.secret;
    return { revoked: revoked.secret, exited: exited.secret, foreign: foreign.secret, truncated: s.slice(0, -1), extended: `${s}A`, case: s.toUpperCase() }[k];
  }),
);

const method = fc.oneof(fc.constantFrom(...AGENT_METHOD_NAMES), fc.string({ maxLength: 20 }), fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty'));
/** Ids as raw JSON text: ordinary, huge, non-finite, fractional, long strings, and wrong types. */
const rawId = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom('1e400', '-1e400', '123456789012345678901234567890', '-0', '0.000001', 'null', 'true', '[]', '{}', '[1,2]'),
  fc.string({ maxLength: 30 }).map((s) => JSON.stringify(s)),
  fc.nat(60_000).map((n) => JSON.stringify('i'.repeat(n))),
);
const jsonrpc = fc.oneof(fc.constant('2.0'), fc.constantFrom('1.0', '2', '', 2, 2.0001, null), notString);

/** A request object as text, with the id spliced in raw (so it can be a number JSON cannot round-trip). */
function request(fields: Record<string, unknown>, id: string | undefined): string {
  const body = JSON.stringify(fields);
  if (id === undefined) return body;
  return body === '{}' ? `{"id":${id}}` : `{"id":${id},${body.slice(1)}`;
}

/** An unauthenticated request: any envelope, any params (valid ones included), a secret that must fail. */
const unauthenticated = fc
  .record({ jsonrpc, method, params: fc.oneof(validParams, garbageParams, fc.jsonValue()), auth: badSecret, id: fc.option(rawId, { nil: undefined }) }, { requiredKeys: ['auth'] })
  .map(({ id, ...f }) => request(f, id));

/** Writes the board would carry out with the live secret: each offered here with a secret that must fail. */
const validWrite = fc.constantFrom<[string, Record<string, unknown>]>(
  ['add', { title: 'created by the fuzz' }],
  ['claim', {}],
  ['claim', { taskId: 'T-2' }],
  ['note', { taskId: 'T-1', text: 'note by the fuzz', token: 0 }],
  ['renew', { taskId: 'T-1', token: 0 }],
  ['release', { taskId: 'T-1', token: 0 }],
  ['done', { taskId: 'T-1', token: 0 }],
  ['edit', { taskId: 'T-1', title: 'renamed by the fuzz', token: 0 }],
);
/** A perfect request in every way but its secret. */
const wrongSecret = fc
  .record({ write: validWrite, auth: badSecret, id: fc.integer() })
  .map(({ write: [m, params], auth, id }) => request({ jsonrpc: '2.0', method: m, params: 'token' in params ? { ...params, token } : params, auth }, String(id)));

/** The live secret, a real method, and params wrong in every field. */
const authenticatedGarbage = fc
  .record({ method: fc.constantFrom(...AGENT_METHOD_NAMES), params: garbageParams, id: rawId })
  .map(({ id, ...f }) => request({ jsonrpc: '2.0', ...f, auth: agent.secret }, id));

/** The live secret and even valid params, but the envelope itself is broken in one field. */
const brokenEnvelope = fc
  .record({
    which: fc.constantFrom('jsonrpc', 'method', 'id', 'params'),
    bad: fc.oneof(notString, fc.constantFrom('1.0', '')),
    badParams: fc.oneof(fc.array(fc.jsonValue(), { maxLength: 3 }), fc.string(), fc.integer(), fc.boolean()),
    params: validParams,
    method: fc.constantFrom(...AGENT_METHOD_NAMES),
    badId: fc.constantFrom('null', 'true', '[]', '{}', '[1]', '{"a":1}'),
  })
  .map(({ which, bad, badParams, params, method: m, badId }) => {
    const f: Record<string, unknown> = { jsonrpc: '2.0', method: m, params, auth: agent.secret };
    if (which === 'jsonrpc') f.jsonrpc = bad;
    if (which === 'method') f.method = typeof bad === 'string' ? 42 : bad;
    if (which === 'params') f.params = badParams;
    return request(f, which === 'id' ? badId : '7');
  });

const line = fc.oneof(
  { weight: 3, arbitrary: unauthenticated },
  { weight: 3, arbitrary: wrongSecret },
  { weight: 3, arbitrary: authenticatedGarbage },
  { weight: 2, arbitrary: brokenEnvelope },
  { weight: 1, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 80 }).map((s) => s.replace(/\n/g, ' ')) },
).map((s) => Buffer.from(`${s}\n`));

const randomBytes = fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b));

/** JSON nested thousands deep, as the id, the params or a field of them (a recursive parser or validator
 *  would overflow its stack). */
const deep = fc.record({ depth: fc.integer({ min: 1_000, max: 20_000 }), where: fc.constantFrom('id', 'params', 'field', 'top') }).map(({ depth, where }) => {
  const nested = '['.repeat(depth) + ']'.repeat(depth);
  const auth = JSON.stringify(agent.secret);
  if (where === 'top') return Buffer.from(`${nested}\n`);
  if (where === 'id') return Buffer.from(`{"jsonrpc":"2.0","id":${nested},"method":"board","auth":${auth}}\n`);
  if (where === 'params') return Buffer.from(`{"jsonrpc":"2.0","id":3,"method":"claim","params":${nested},"auth":${auth}}\n`);
  return Buffer.from(`{"jsonrpc":"2.0","id":3,"method":"note","params":{"taskId":"T-1","text":${nested},"token":${token}},"auth":${auth}}\n`);
});

/** A valid, authenticated write that never gets its newline: the host must not run it. */
const unfinished = fc.nat().map((n) => {
  const add = JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'add', params: { title: 'unfinished' }, auth: agent.secret });
  return Buffer.from(add.slice(0, 1 + (n % add.length)));
});

const run = fc.record({
  frames: fc.array(fc.oneof({ weight: 8, arbitrary: line }, { weight: 2, arbitrary: randomBytes }, { weight: 1, arbitrary: deep }), { minLength: 1, maxLength: 5 }),
  tail: fc.option(unfinished, { nil: undefined }),
  cuts: fc.array(fc.nat(), { maxLength: 6 }),
});

// ---- the exchange ------------------------------------------------------------------------------------

/** How many answers the host owes for `bytes`: one per complete line that is not blank once decoded. */
function expectedAnswers(bytes: Buffer): number {
  const lines = new TextDecoder().decode(bytes).split('\n');
  lines.pop();
  return lines.filter((l) => l.trim() !== '').length;
}

/** Sends `bytes` cut at `cuts`, collects answers until `want` arrived (or the host closed), then a short
 *  grace for anything an unfinished line might (wrongly) produce, then closes. */
function exchange(bytes: Buffer, cuts: number[], want: number): Promise<{ answers: unknown[]; closedByHost: boolean }> {
  return new Promise((resolve, reject) => {
    const c = net.createConnection(socket.path);
    const answers: unknown[] = [];
    let buf = '';
    let closedByHost = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      c.destroy();
      reject(new Error(`only ${answers.length} of ${want} answers within ${ANSWER_TIMEOUT_MS} ms`));
    }, ANSWER_TIMEOUT_MS);
    const finish = () => {
      clearTimeout(timer);
      clearTimeout(graceTimer);
      c.destroy();
      resolve({ answers, closedByHost });
    };
    const check = () => {
      if (answers.length >= want && graceTimer === undefined) graceTimer = setTimeout(finish, PARTIAL_GRACE_MS);
    };
    c.setEncoding('utf8');
    c.on('data', (d: string) => {
      buf += d;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        answers.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
      }
      check();
    });
    c.on('close', () => {
      closedByHost = true;
      finish();
    });
    c.on('error', () => undefined);
    c.on('connect', () => {
      const points = [...new Set(cuts.map((x) => x % (bytes.length + 1)))].sort((a, b) => a - b);
      let from = 0;
      for (const p of [...points, bytes.length]) {
        if (p > from) c.write(bytes.subarray(from, p));
        from = p;
      }
      check();
    });
  });
}

describe('agents’ socket fuzz', () => {
  it(`${RUNS} runs of hostile frames: every line answered with an error, the board untouched, the host up (seed ${SEED})`, async () => {
    const before = snapshot();
    const events: string[] = [];
    const off = board.onEvent((e) => events.push(e.kind));
    const started = performance.now();
    try {
      await fc.assert(
        fc.asyncProperty(run, async ({ frames, tail, cuts }) => {
          const bytes = Buffer.concat([...frames, ...(tail ? [tail] : [])]);
          const want = expectedAnswers(bytes);
          const { answers, closedByHost } = await exchange(bytes, cuts, want);
          // The host closes only on an oversized frame, which these runs never send.
          expect(closedByHost, 'the host closed the connection').toBe(false);
          expect(answers.length).toBe(want);
          for (const a of answers) {
            expect(a).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number), message: expect.any(String) } });
            expect(a).not.toHaveProperty('result');
          }
          expect(events, 'board events caused by the fuzz').toEqual([]);
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    } catch (err) {
      throw new Error(`agents' socket fuzz failed; replay with FUZZ_SEED=${SEED}\n${(err as Error).message}`);
    } finally {
      off.dispose();
    }
    expect(performance.now() - started, 'the fuzz stays bounded (ms)').toBeLessThan(20_000);

    // Still up, and a normal authenticated call is answered.
    const client = await RpcClient.connect(socket.path, agent.secret);
    try {
      const view = await client.call('board');
      expect(view.tasks.map((t) => t.id)).toEqual(['T-1', 'T-2', 'T-3']);
    } finally {
      client.close();
    }
    // Nothing created, claimed, noted or renamed: the board is exactly as before.
    expect(snapshot()).toBe(before);
    expect(board.state.tasks.get('T-1')?.notes.map((n) => n.text)).toEqual(['before the fuzz']);
  }, 60_000);
});

// ---- connection floods (issue 29, finding 3) ---------------------------------------------------------------

/** Flood runs: each opens up to a few hundred connections of mixed kinds, checks, and closes them all. */
const FLOOD_RUNS = 12;
/** How long an agent's call may take while a flood is held, here on one loaded process with its flooders. */
const FLOOD_ANSWER_MS = 5_000;

/** One flood: idle connections, unfinished lines of random sizes (some past what a waiting connection may
 *  send), lines of junk, and connections that come and go, opened in a random order. */
const flood = fc.record({
  idle: fc.integer({ min: 0, max: 300 }),
  partial: fc.array(fc.integer({ min: 1, max: ConnectionLimits.unauthenticatedBytes + 64 * 1024 }), { maxLength: 80 }),
  junkLines: fc.integer({ min: 0, max: 100 }),
  churn: fc.integer({ min: 0, max: 200 }),
  order: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
});

/** Opens a connection of `kind`; resolves when it is open and has sent its bytes, or was closed. */
function open(kind: 'idle' | 'junk' | 'churn' | number, held: net.Socket[]): Promise<void> {
  return new Promise((resolve) => {
    const c = net.createConnection(socket.path);
    held.push(c);
    c.on('error', () => resolve());
    c.on('close', () => resolve());
    c.on('connect', () => {
      if (kind === 'idle') return resolve();
      if (kind === 'churn') return c.destroy();
      const bytes = kind === 'junk' ? 'not json\n{"jsonrpc":"2.0","id":1,"method":"board","auth":"nope"}\n' : `{"jsonrpc":"2.0","id":1,"method":"note","params":{"text":"${'z'.repeat(kind)}`;
      c.write(bytes, () => resolve());
    });
  });
}

describe('agents’ socket under connection floods', () => {
  it(`${FLOOD_RUNS} floods of idle, half-line, junk and churning connections: the budget holds, an agent's call is answered, nothing leaks (seed ${SEED})`, async () => {
    const before = snapshot();
    const client = await RpcClient.connect(socket.path, agent.secret);
    try {
      await fc.assert(
        fc.asyncProperty(flood, async (f) => {
          const held: net.Socket[] = [];
          const kinds: Array<'idle' | 'junk' | 'churn' | number> = [...Array(f.idle).fill('idle'), ...f.partial, ...Array(f.junkLines).fill('junk'), ...Array(f.churn).fill('churn')];
          // A seeded shuffle, so a failing run replays in the same order.
          let r = f.order;
          for (let i = kinds.length - 1; i > 0; i--) {
            r = (r * 1103515245 + 12345) % 2 ** 31;
            const j = r % (i + 1);
            [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
          }
          try {
            await Promise.all(kinds.map((k) => open(k, held)));
            const { total, waiting } = socket.budget.counts;
            expect(total).toBeLessThanOrEqual(ConnectionLimits.maxConnections);
            expect(waiting).toBeLessThanOrEqual(ConnectionLimits.maxUnauthenticated);
            // An agent's call on its open connection, and on a fresh one, is answered under the flood.
            const t0 = performance.now();
            await client.call('board');
            const fresh = await RpcClient.connect(socket.path, agent.secret);
            try {
              expect((await fresh.call('board')).tasks.length).toBe(3);
            } finally {
              fresh.close();
            }
            expect(performance.now() - t0).toBeLessThan(FLOOD_ANSWER_MS);
          } finally {
            for (const c of held) c.destroy();
          }
          // Every connection closed gives back its slot: only the agent's own is held.
          await expect.poll(() => socket.budget.counts, { timeout: 5_000 }).toEqual({ total: 1, waiting: 0 });
        }),
        { seed: SEED, numRuns: FLOOD_RUNS, endOnFailure: true },
      );
    } catch (err) {
      throw new Error(`agents' socket flood fuzz failed; replay with FUZZ_SEED=${SEED}\n${(err as Error).message}`);
    } finally {
      client.close();
    }
    expect(snapshot()).toBe(before);
  }, 120_000);
});
