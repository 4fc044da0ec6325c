// The agent of the host chaos test (hostChaos.ts): runs inside an agent's pane (the host binds the agent's
// secret to its pane's processes), calls the board over the agents' socket with the CLI's own client and its
// keyed retry (callWrite), and writes every call and its answer to its history, one fsynced JSON line each,
// so the judge reads what the agent was told even if its host died meanwhile.
//
// argv: HISTORY SEED STOP_FILE TASK_COUNT [FINAL_FILE]. The files lie in its host's Thread folder: a contained
// pane has a private /tmp, and writes only that folder (a Thread without git).
// Until STOP_FILE exists: claim (by id or the next open one), then a few fenced writes (renew, note with a
// text of its own, sometimes sent again with the same key, sometimes with an old token on purpose), then done
// or release. With FINAL_FILE (the closer): once it exists, claim every task it lists and release each.
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [hist, seedArg, stopFile, taskCountArg, finalFile] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const { RpcClient, callWrite, RpcFailure } = await import(pathToFileURL(join(here, '..', '..', 'dist-main', 'src-main', 'cli', 'rpcClient.js')).href);

const socket = process.env.FORKBENCH_SOCKET;
const secret = process.env.FORKBENCH_SECRET;
const me = process.env.FORKBENCH_AGENT_ID;
/** A write's whole time, tries included: long enough to wait out a serve restart or a database restart. */
const CALL_TIMEOUT_MS = 9000;
const CONNECT_MS = 2000;

const fd = fs.openSync(hist, 'a');
const rec = (o) => {
  fs.writeSync(fd, `${JSON.stringify({ agent: me, t: Date.now(), ...o })}\n`);
  fs.fsyncSync(fd);
};

let s = Number(seedArg) >>> 0 || 1;
const rnd = () => {
  s ^= s << 13;
  s ^= s >>> 17;
  s ^= s << 5;
  return (s >>> 0) / 0x1_0000_0000;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let taskCount = Number(taskCountArg);

/** One keyed write, as the CLI sends it: reach the socket (waiting out a host that is down), callWrite. */
async function call(method, params) {
  let retries = 0;
  const t0 = Date.now();
  let c;
  try {
    c = await RpcClient.reach(socket, secret, { connectTimeoutMs: CONNECT_MS, downWaitMs: CALL_TIMEOUT_MS, callTimeoutMs: CALL_TIMEOUT_MS });
  } catch (e) {
    return { ok: false, code: 'unreachable', msg: e.message, retries, ms: Date.now() - t0 };
  }
  try {
    const value = await callWrite(c, socket, secret, method, params, {
      timeoutMs: CALL_TIMEOUT_MS,
      reach: { connectTimeoutMs: CONNECT_MS, downWaitMs: CALL_TIMEOUT_MS },
      onRetry: () => retries++,
    });
    return { ok: true, value, retries, ms: Date.now() - t0 };
  } catch (e) {
    if (e instanceof RpcFailure) return { ok: false, code: e.error.data?.reason ?? String(e.error.code), msg: e.error.message, retries, ms: Date.now() - t0 };
    return { ok: false, code: 'unreachable', msg: e.message, retries, ms: Date.now() - t0 };
  }
  finally {
    c.close();
  }
}

let n = 0;
/** Send, record; sometimes send the same request with the same key again (a deliberate retry) and record that too. */
async function send(method, params, extra = {}) {
  const r = await call(method, params);
  rec({ m: method, key: params.key, task: params.taskId ?? null, token: params.token ?? null, ...extra, ...r });
  if (r.ok && rnd() < 0.25) {
    const again = await call(method, params);
    rec({ m: method, key: params.key, task: params.taskId ?? null, token: params.token ?? null, ...extra, resend: true, ...again });
  }
  return r;
}
const nextKey = () => `${me}.${++n}`;
/** What says this agent's claim is over (as opposed to the board being out of reach for a moment). */
const LOST = new Set(['stale-token', 'not-holder', 'lease-expired', 'bad-state', 'no-such-task']);

const past = [];
/** Claims whose done or release did not get through: let go as soon as the board answers again. */
let unended = [];
const letGo = async () => {
  const left = [];
  for (const c of unended) {
    const r = await send('release', { taskId: c.task, token: c.token, key: nextKey() });
    if (!r.ok && !LOST.has(r.code)) left.push(c);
  }
  unended = left;
};
while (!fs.existsSync(stopFile)) {
  if (unended.length) await letGo();
  if (fs.existsSync(`${stopFile}.tasks`)) taskCount = Number(fs.readFileSync(`${stopFile}.tasks`, 'utf8')) || taskCount;
  const id = rnd() < 0.5 ? undefined : `T-${1 + Math.floor(rnd() * taskCount)}`;
  const r = await send('claim', id ? { taskId: id, key: nextKey() } : { key: nextKey() });
  if (!r.ok) {
    await sleep(100 + rnd() * 200);
    continue;
  }
  const held = { task: r.value.taskId, token: r.value.token };
  const steps = 1 + Math.floor(rnd() * 6);
  let unavailable = 0;
  let lost = false;
  for (let i = 0; i < steps && !fs.existsSync(stopFile); i++) {
    await sleep(30 + rnd() * 120);
    const roll = rnd();
    const old = past.filter((p) => p.task === held.task);
    // An old token: one this agent held on this task before, else the one below its own (another claim's).
    const oldToken = old.length ? old[Math.floor(rnd() * old.length)].token : held.token > 1 ? held.token - 1 : null;
    const stale = roll >= 0.8 && oldToken !== null;
    const token = stale ? oldToken : held.token;
    const k = nextKey();
    const w =
      roll < 0.25 || (stale && roll < 0.9)
        ? await send('renew', { taskId: held.task, token, key: k }, { stale })
        : await send('note', { taskId: held.task, text: `${k} under ${token}`, token, key: k }, { stale });
    if (stale || w.ok) continue;
    if (LOST.has(w.code)) {
      lost = true;
      break;
    }
    if (++unavailable >= 3) break;
  }
  if (!lost) {
    const end = await send(rnd() < 0.15 ? 'done' : 'release', { taskId: held.task, token: held.token, key: nextKey() });
    if (!end.ok && !LOST.has(end.code)) unended.push(held);
  }
  past.push(held);
}
// Stopping: claims whose release did not get through are let go now, so every task is claimable at the end.
for (let i = 0; i < 10 && unended.length; i++) {
  await letGo();
  if (unended.length) await sleep(500);
}
rec({ m: 'stopped' });
if (finalFile) {
  while (!fs.existsSync(finalFile)) await sleep(100);
  const ids = JSON.parse(fs.readFileSync(finalFile, 'utf8'));
  for (const id of ids) {
    // A claim still running out its lease (its holder's release was lost) is waited for, up to a lease.
    let r;
    for (const until = Date.now() + 20_000; ; await sleep(250)) {
      r = await call('claim', { taskId: id, key: nextKey() });
      if (r.ok || r.code !== 'bad-state' || Date.now() > until) break;
    }
    rec({ m: 'final-claim', task: id, ...r });
    if (r.ok) await call('release', { taskId: id, token: r.value.token, key: nextKey() });
  }
  rec({ m: 'final-done' });
}
fs.closeSync(fd);
