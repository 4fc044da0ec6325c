import * as fs from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { Limits } from '../../src-shared/board/limits.js';
import type { AgentInfo } from '../../src-shared/protocol/windowApi.js';
import { threadKeyOf } from '../../src-main/thread/threadHost.js';
import type { PgCluster } from './pgCluster.js';
import { alive } from './processes.js';
import { ptyHostPidOf, serveOn, type ServeProc } from './serveProcess.js';

/**
 * A chaos run of several hosts on one PostgreSQL board (issue 31), judged from the agents' own histories and
 * the board's event log. Three `serve` processes (each its own data, runtime and project folder, as three
 * machines) share one board; agents on each run hostChaosDriver.mjs in their panes, making keyed fenced
 * writes with the CLI's client and retries, while serves are killed -9 (and started again on the same
 * folders, adopting their agents from the pty host), SIGSTOPped past their host lease, and the database is
 * restarted `-m immediate`. Faults come one at a time, so each one's effect can be timed and judged.
 *
 * What it must never see:
 * - a grant while the task's claim is live (no claim-ended or reassign between), or a token not above every
 *   earlier one;
 * - an agent write in the log (renew, note, submitted, release) not made under the live claim of its agent;
 * - an ok answer to a write sent with an old token; an ok note, done or release whose event is missing or
 *   there more than once; an ok claim with no grant; a key answered ok twice with two different answers;
 * - a claim held by a killed (or stopped) host's agents at the fault not ended `host-lost` within the host
 *   lease plus a sweep plus slack (when the host stayed down that long);
 * - a claim live when the database was stopped (three host leases, every host and agent going on) ended
 *   `lapsed` or `host-lost` by it: an outage is nobody's fault;
 * - a window write sent while the database restarts or is stopped answered anything but ok or
 *   `board-unavailable`, or answered ok and missing from the log;
 * - a relaunch of an exited tab sent while the database is stopped that starts an agent though refused, or
 *   leaves other than one dead tab; once the database is back, one that does not leave exactly one agent;
 * - at the end, a task (not in review or done) that an agent cannot claim.
 */

export interface HostChaosOptions {
  pgc: PgCluster;
  url: string;
  root: string;
  durationMs: number;
  seed: number;
  hostLeaseMs: number;
  tasks: number;
  /** Agents on each host. */
  agentsPerHost: number[];
  /** The run goes past durationMs (up to 3×) until it has injected this many faults. */
  minFaults: number;
  log: (s: string) => void;
}

export interface HostChaosReport {
  calls: number;
  acks: number;
  refusals: Record<string, number>;
  /** Tries the CLI's callWrite sent again after a lost answer, and deliberate resends of a key. */
  cliRetries: number;
  resends: number;
  staleSent: number;
  faults: { kill: number; quickKill: number; stop: number; dbRestart: number; dbStop: number };
  /** Window writes sent while a database fault was in flight, by answer: ok, or its code. */
  windowWrites: Record<string, number>;
  /** Relaunches of an exited tab sent while the database was stopped, by answer. */
  relaunches: Record<string, number>;
  /** ms from a kill -9 (or SIGSTOP) to the last of its host's claims ended, per fault. */
  hostLostMs: number[];
  claimsLost: number;
  events: number;
  finalClaims: number;
  problems: string[];
}

/** Slack for a loaded 2-core machine on top of the host lease and one sweep period. */
const HOST_LOST_SLACK_MS = 5_000;
/** Agents' own lease: longer than the host lease plus a sweep, so a lost host's claims end host-lost, not expired. */
const AGENT_LEASE_MS = 10_000;
/** Open tasks the run keeps on the board (a person adding work): agents find work to claim, and the end has
 *  tasks that went through faults to claim again. */
const MIN_OPEN = 6;
/** A database stop lasts this many host leases: every host's lease would lapse in it, were it not made up for. */
const OUTAGE_LEASES = 3;
/** How long a window write sent during a database fault may take to be answered (the fault's length and more). */
const WINDOW_WRITE_ANSWER_MS = 30_000;
/** How far past its duration a run may go to reach its minimum of faults. */
export const MAX_STRETCH = 3;

const DRIVER = join(import.meta.dirname, 'hostChaosDriver.mjs');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rng(seed: number): () => number {
  // Spread a small seed over the word, and skip the first outputs: xorshift's first few from a small seed
  // are small and alike.
  let s = Math.imul(seed >>> 0 || 1, 0x9e3779b1) >>> 0 || 1;
  for (let i = 0; i < 20; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
  }
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x1_0000_0000;
  };
}

interface Host {
  name: string;
  at: string;
  project: string;
  key: string;
  s: ServeProc;
  agents: string[];
  /** Down (killed, not yet started again) or stopped. */
  out: boolean;
}

interface Fault {
  kind: 'kill' | 'quickKill' | 'stop' | 'dbRestart' | 'dbStop';
  host?: string;
  at: number;
  /** The head read once the host could decide nothing more (after its exit, or once stopped). */
  head?: number;
  /** Set by the run: when every claim its agents held at `head` had ended (ms after `at`), or null. */
  endedMs?: number | null;
  /** A killed host's serve listening again (wall clock, as the histories' `t`): its agents, kept by its pty
   *  host, must be answered by the new serve after this. */
  backAt?: number;
  /** A database stop: the head once the board had made up for it, a while after the server was back. */
  headAfter?: number;
}

/** A window write sent while a database fault was in flight, and its answer. */
interface WindowWrite {
  host: string;
  fault: Fault['kind'];
  title: string;
  answer: Promise<{ ok: true } | { ok: false; code: string; message: string }>;
}

/** A call and its answer as the driver wrote it. */
interface Line {
  agent: string;
  t: number;
  m: string;
  key?: string;
  task?: string | null;
  token?: number | null;
  stale?: boolean;
  resend?: boolean;
  ok?: boolean;
  code?: string;
  msg?: string;
  retries?: number;
  value?: { taskId?: string; token?: number };
}

/** A small window call that gives up, so a host busy recovering never hangs the run. */
async function windowCall<T>(h: Host, method: string, params: Record<string, unknown>, ms = 5000): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      h.s.window.call(method as never, { key: h.key, ...params } as never) as Promise<T>,
      new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms))),
    ]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

export async function runHostChaos(o: HostChaosOptions): Promise<HostChaosReport> {
  const random = rng(o.seed);
  const db = new pg.Client({ connectionString: o.url });
  db.on('error', () => undefined);
  let client: pg.Client | null = db;
  await db.connect();
  /** The test's own reads of the log, reconnecting after a database restart. */
  const query = async <R extends pg.QueryResultRow>(sql: string, args: unknown[] = []): Promise<R[]> => {
    for (let i = 0; ; i++) {
      try {
        if (!client) {
          const c = new pg.Client({ connectionString: o.url });
          c.on('error', () => undefined);
          await c.connect();
          client = c;
        }
        return (await client.query<R>(sql, args)).rows;
      } catch (err) {
        await client?.end().catch(() => undefined);
        client = null;
        if (i > 100) throw err;
        await sleep(200);
      }
    }
  };
  const faults: Fault[] = [];
  const problems: string[] = [];
  const env = { FORKBENCH_BOARD_URL: o.url };
  let serves = 0;
  /** Start a serve on a host's folders; one that exits without being killed by the run is a problem, with
   *  what it said. Every serve's stderr is kept beside the histories. */
  const startServe = async (h: { name: string; at: string; project: string; key: string }): Promise<ServeProc> => {
    const s = await serveOn({ root: h.at, project: h.project, key: h.key, args: ['--board-name', 'chaos board', '--host-lease-ms', String(o.hostLeaseMs)], env });
    const file = join(o.root, `serve-${h.name}-${++serves}.err`);
    const started = performance.now();
    void s.exit.then((code) => {
      // A serve still running when a passing run's folder is removed exits after it: nothing to keep then.
      try {
        fs.writeFileSync(file, s.err());
      } catch {
        // The folder is gone: the run passed and was cleaned up.
      }
      if (!killedByRun.has(s)) problems.push(`serve ${h.name} exited by itself (code ${code}, ${Math.round(performance.now() - started)} ms after its start): ${s.err().trim().split('\n').slice(-6).join(' | ')}`);
    });
    return s;
  };
  const killedByRun = new Set<ServeProc>();
  const windowWrites: WindowWrite[] = [];
  const relaunches: Record<string, number> = {};
  /** A window call's answer: its value, or the code and words it was refused with. */
  const windowAnswer = <T>(h: Host, method: string, params: Record<string, unknown>): Promise<{ ok: true; value: T } | { ok: false; code: string; message: string }> =>
    (h.s.window.call(method as never, { key: h.key, ...params } as never) as Promise<T>).then(
      (value) => ({ ok: true as const, value }),
      (err: Error) => {
        try {
          const e = (JSON.parse(err.message) as { error: { code: string; message: string } }).error;
          return { ok: false as const, code: e.code, message: e.message };
        } catch {
          return { ok: false as const, code: 'no-answer', message: err.message };
        }
      },
    );
  const agentsOf = async (h: Host): Promise<AgentInfo[] | undefined> => (await windowCall<{ agents: AgentInfo[] }>(h, 'thread.snapshot', {}))?.agents;
  /** A person's write from a host's window, sent now and answered whenever: a new task, so the log says
   *  whether one answered ok landed (once). */
  const windowWrite = (h: Host, fault: Fault['kind']): void => {
    const title = `in flight ${windowWrites.length + 1}`;
    windowWrites.push({ host: h.name, fault, title, answer: windowAnswer(h, 'task.add', { title }) });
  };
  const hosts: Host[] = [];
  /** What a host's agents and the run say to each other: files in a folder of the host's Thread folder, the
   *  one folder its contained agents write (a Thread without git) and the test reads (their /tmp is private). */
  const talkOf = (h: { project: string }) => join(h.project, 'chaos');
  const historyDirOf = (h: { project: string }) => join(talkOf(h), 'history');
  /** The same file in every host's folder: the stop (and the task count), the closer's list. */
  const tellAgents = (name: string, text: string) => {
    for (const h of hosts) fs.writeFileSync(join(talkOf(h), name), text);
  };
  const hostOfAgent = new Map<string, string>();
  /** The agents a host lists, but the one relaunched: what a relaunch must not add to. */
  const othersOf = async (h: Host, tab: string) => (await agentsOf(h))?.filter((a) => a.id !== tab).map((a) => a.id).sort();
  /** Relaunch the exited tab while the database is stopped: refused, nothing may start and the tab stays. */
  const relaunchDuringOutage = async (h: Host, tab: string): Promise<void> => {
    const before = await othersOf(h, tab);
    const r = await windowAnswer<AgentInfo>(h, 'agent.relaunch', { agentId: tab });
    const code = r.ok ? 'ok' : r.code;
    relaunches[code] = (relaunches[code] ?? 0) + 1;
    if (r.ok) return;
    if (r.code !== 'board-unavailable') problems.push(`a relaunch on ${h.name} during the database stop was answered ${r.code}: ${r.message.slice(0, 300)}`);
    // Nothing was done: a moment later no agent started and the dead tab is as it was.
    await sleep(1000);
    const after = await agentsOf(h);
    if (JSON.stringify(after?.filter((a) => a.id !== tab).map((a) => a.id).sort()) !== JSON.stringify(before)) problems.push(`a relaunch refused on ${h.name} during the database stop changed its agents: ${JSON.stringify(before)} then ${JSON.stringify(after?.map((a) => a.id))}`);
    if (after?.find((a) => a.id === tab)?.status !== 'exited') problems.push(`a relaunch refused on ${h.name} during the database stop did not leave its dead tab ${tab}`);
  };
  /** The same relaunch once the database is back (sent again until the board takes it): exactly one agent. */
  const relaunchOnceBack = async (h: Host, tab: string): Promise<void> => {
    const before = await othersOf(h, tab);
    if ((await agentsOf(h))?.find((a) => a.id === tab)?.status !== 'exited') return;
    const until = performance.now() + 20_000;
    for (;;) {
      const r = await windowAnswer<AgentInfo>(h, 'agent.relaunch', { agentId: tab });
      if (r.ok) {
        const after = await othersOf(h, tab);
        const added = after?.filter((id) => !before?.includes(id)) ?? [];
        if (added.length !== 1 || added[0] !== r.value.id) problems.push(`a relaunch on ${h.name} after the database stop added ${JSON.stringify(added)}, not just ${r.value.id}`);
        await windowCall(h, 'agent.close', { agentId: r.value.id });
        return;
      }
      if (r.code !== 'board-unavailable' || performance.now() > until) {
        problems.push(`a relaunch on ${h.name} after the database stop was answered ${r.code}: ${r.message.slice(0, 300)}`);
        return;
      }
      await sleep(300);
    }
  };

  try {
    for (const [i, name] of ['A', 'B', 'C'].entries()) {
      if (i >= o.agentsPerHost.length) break;
      const at = join(o.root, name);
      const project = join(at, 'project');
      fs.mkdirSync(historyDirOf({ project }), { recursive: true });
      const key = threadKeyOf(project);
      const s = await startServe({ name, at, project, key });
      hosts.push({ name, at, project, key, s, agents: [], out: false });
    }
    const first = hosts[0]!;
    await first.s.window.call('board.setSettings', { key: first.key, patch: { leaseMs: AGENT_LEASE_MS, poisonLimit: Limits.maxPoisonLimit, claimLimit: Limits.maxClaimLimit } });
    for (let i = 0; i < o.tasks; i++) await first.s.window.call('task.add', { key: first.key, title: `chaos ${i + 1}` });
    let taskCount = o.tasks;
    tellAgents('stop.tasks', String(taskCount));
    let closer = true;
    for (const [i, h] of hosts.entries()) {
      for (let j = 0; j < (o.agentsPerHost[i] ?? 0); j++) {
        const a: AgentInfo = await h.s.window.call('agent.launch', { key: h.key, profile: 'shell', cols: 200, rows: 30 });
        h.agents.push(a.id);
        hostOfAgent.set(a.id, h.name);
        const args = [join(historyDirOf(h), `${a.id}.jsonl`), String(o.seed * 31 + hosts.indexOf(h) * 7 + j + 1), join(talkOf(h), 'stop'), String(o.tasks), ...(closer ? [join(talkOf(h), 'final.json')] : [])];
        closer = false;
        await h.s.window.call('agent.input', { key: h.key, agentId: a.id, data: `exec ${process.execPath} ${DRIVER} ${args.join(' ')}\r` });
      }
    }
    const boardId = (await query<{ id: string }>('SELECT id FROM forkbench.boards WHERE name = $1', ['chaos board']))[0]!.id;
    const head = async () => Number((await query<{ head: string }>('SELECT head FROM forkbench.boards WHERE id = $1', [boardId]))[0]!.head);
    const eventsUpTo = async (n?: number): Promise<BoardEvent[]> =>
      (await query<{ body: string }>('SELECT body FROM forkbench.events WHERE board_id = $1 AND seq <= $2 ORDER BY seq', [boardId, n ?? Number.MAX_SAFE_INTEGER])).map((r) => JSON.parse(r.body) as BoardEvent);
    /** Claims live at position `n` held by these agents. */
    const liveAt = async (n: number, agents: string[]) => [...claimsAt(await eventsUpTo(n)).values()].filter((c) => agents.includes(c.agentId));
    /** Wait until every one of these claims has ended in the log: ms waited, or null past `limitMs`. */
    const endedWithin = async (claims: Array<{ token: number }>, since: number, limitMs: number): Promise<number | null> => {
      for (;;) {
        const ended = endedTokens(await eventsUpTo());
        if (claims.every((c) => ended.has(c.token))) return performance.now() - since;
        if (performance.now() - since > limitMs) return null;
        await sleep(100);
      }
    };
    const hostLostLimit = o.hostLeaseMs + o.hostLeaseMs / 3 + HOST_LOST_SLACK_MS;

    // Every agent has made a call before the first fault.
    const started = performance.now();
    const histories = () => hosts.flatMap((h) => fs.readdirSync(historyDirOf(h)).map((f) => join(historyDirOf(h), f)));
    while (histories().filter((f) => fs.statSync(f).size > 0).length < hostOfAgent.size) {
      if (performance.now() - started > 60_000) throw new Error('the agents made no call in 60 s');
      await sleep(100);
    }
    o.log(`all ${hostOfAgent.size} agents running (${hosts.map((h) => `${h.name}: ${h.agents.join(' ')}`).join('; ')}); faults begin`);

    let round: Array<Fault['kind']> = [];
    const t0 = performance.now();
    const counted = () => faults.length;
    while (performance.now() - t0 < o.durationMs || (counted() < o.minFaults && performance.now() - t0 < MAX_STRETCH * o.durationMs)) {
      await sleep(800 + random() * 1500);
      // Upkeep, as a person would: approve what is in review, keep a few tasks open.
      const live = hosts.find((h) => !h.out)!;
      const snap = await windowCall<{ board: { tasks: Array<{ id: string; state: string }> } }>(live, 'thread.snapshot', {});
      if (snap) {
        for (const t of snap.board.tasks.filter((x) => x.state === 'review')) await windowCall(live, 'task.approve', { taskId: t.id });
        const open = snap.board.tasks.filter((t) => t.state === 'open').length;
        if (open < MIN_OPEN) {
          for (let i = open; i < MIN_OPEN; i++) if (await windowCall(live, 'task.add', { title: `chaos ${taskCount + 1}` })) taskCount++;
          tellAgents('stop.tasks', String(taskCount));
        }
      }
      // Every kind of fault in each round of four, in a random order: a short run sees each of them.
      if (!round.length) round = shuffle(['kill', 'quickKill', 'stop', 'dbRestart', 'dbStop'] as const, random);
      const kind = round.pop()!;
      const h = hosts[Math.floor(random() * hosts.length)]!;
      if (kind === 'kill' || kind === 'quickKill') {
        // kill -9; down past its lease (its claims must end host-lost), or back at once (`quickKill`: its
        // agents, still alive in its pty host, keep their claims under grace or lose them host-lost).
        const quick = kind === 'quickKill';
        const f: Fault = { kind: quick ? 'quickKill' : 'kill', host: h.name, at: performance.now() };
        h.out = true;
        killedByRun.add(h.s);
        h.s.proc.kill('SIGKILL');
        await h.s.exit;
        h.s.window.close();
        f.head = await head();
        faults.push(f);
        const held = await liveAt(f.head, h.agents);
        if (!quick) {
          f.endedMs = await endedWithin(held, f.at, hostLostLimit);
          o.log(`kill -9 ${h.name} holding ${held.length} claims: ended in ${f.endedMs === null ? 'NEVER' : Math.round(f.endedMs)} ms`);
        } else o.log(`kill -9 ${h.name} and straight back, holding ${held.length} claims`);
        h.s = await startServe(h);
        f.backAt = Date.now();
        h.out = false;
      } else if (kind === 'stop') {
        // SIGSTOP past the host lease: a laptop lid. It wakes to find its claims gone and its writes refused.
        const f: Fault = { kind: 'stop', host: h.name, at: performance.now() };
        h.out = true;
        h.s.proc.kill('SIGSTOP');
        f.head = await head();
        faults.push(f);
        const held = await liveAt(f.head, h.agents);
        await sleep(o.hostLeaseMs * 1.5);
        f.endedMs = await endedWithin(held, f.at, hostLostLimit);
        h.s.proc.kill('SIGCONT');
        h.out = false;
        o.log(`SIGSTOP ${h.name} holding ${held.length} claims: ended in ${f.endedMs === null ? 'NEVER' : Math.round(f.endedMs)} ms; SIGCONT`);
      } else if (kind === 'dbRestart') {
        const f: Fault = { kind: 'dbRestart', at: performance.now() };
        faults.push(f);
        // A person's click in every window as the server goes down: in flight during the crash.
        for (const w of hosts) windowWrite(w, 'dbRestart');
        await o.pgc.restartImmediate();
        o.log(`database restarted -m immediate`);
      } else {
        // The database stopped for three host leases while every host and agent goes on: when it is back, no
        // claim live at the stop may end for it.
        // A tab whose shell exited, for a person to relaunch during the outage.
        const dead = await windowAnswer<AgentInfo>(h, 'agent.launch', { profile: 'shell', cols: 80, rows: 24 });
        if (!dead.ok) problems.push(`a shell could not be launched on ${h.name} before the database stop: ${dead.code} ${dead.message}`);
        else {
          await windowCall(h, 'agent.input', { agentId: dead.value.id, data: 'exit\r' });
          const until = performance.now() + 20_000;
          while ((await agentsOf(h))?.find((a) => a.id === dead.value.id)?.status !== 'exited' && performance.now() < until) await sleep(100);
        }
        const f: Fault = { kind: 'dbStop', at: performance.now() };
        f.head = await head();
        faults.push(f);
        for (const w of hosts) windowWrite(w, 'dbStop');
        await o.pgc.stopServer('immediate');
        const down = performance.now();
        await sleep(OUTAGE_LEASES * o.hostLeaseMs);
        for (const w of hosts) windowWrite(w, 'dbStop');
        if (dead.ok) await relaunchDuringOutage(h, dead.value.id);
        await o.pgc.startServer();
        const outage = performance.now() - down;
        // Long enough for every host to have renewed (or lapsed) and swept: what the outage did is in the log.
        await sleep(2 * o.hostLeaseMs);
        f.headAfter = await head();
        if (dead.ok) await relaunchOnceBack(h, dead.value.id);
        o.log(`database stopped for ${Math.round(outage)} ms and started again`);
      }
    }

    // Every window write sent during a database fault has its answer before the log is judged.
    const answered = await Promise.all(
      windowWrites.map(async (w) => ({ ...w, said: await Promise.race([w.answer, sleep(WINDOW_WRITE_ANSWER_MS).then(() => ({ ok: false as const, code: 'no-answer', message: `none in ${WINDOW_WRITE_ANSWER_MS} ms` }))]) })),
    );

    // The end: every agent lets go and stops; then one claims every task that is not in review or done.
    tellAgents('stop', '');
    const historyOf = () => readHistories(hosts.map(historyDirOf));
    const until = performance.now() + 60_000;
    while ([...hostOfAgent.keys()].some((a) => !(historyOf().get(a) ?? []).some((l) => l.m === 'stopped'))) {
      if (performance.now() > until) {
        const left = [...hostOfAgent].filter(([a]) => !(historyOf().get(a) ?? []).some((l) => l.m === 'stopped'));
        problems.push(`not every agent stopped within 60 s of being told: ${left.map(([a, h]) => `${a} on ${h}`).join(', ')}`);
        break;
      }
      await sleep(200);
    }
    const endState = stateAt(await eventsUpTo());
    const claimable = [...endState.entries()].filter(([, s]) => s !== 'review' && s !== 'done').map(([id]) => id);
    tellAgents('final.json', JSON.stringify(claimable));
    const finalUntil = performance.now() + 30_000 + claimable.length * 1000;
    while (!historyOf().get(hosts[0]!.agents[0]!)?.some((l) => l.m === 'final-done')) {
      if (performance.now() > finalUntil) {
        problems.push('the closing agent did not finish claiming every task');
        break;
      }
      await sleep(200);
    }

    const events = await eventsUpTo();
    // The log beside the histories: a failed run's folder is kept (the test says where) for reading back.
    fs.writeFileSync(join(o.root, 'events.jsonl'), events.map((e) => JSON.stringify(e)).join('\n'));
    const report = judge(events, historyOf(), faults, hostOfAgent, hosts, problems, hostLostLimit);
    report.relaunches = relaunches;
    report.finalClaims = (historyOf().get(hosts[0]!.agents[0]!) ?? []).filter((l) => l.m === 'final-claim' && l.ok).length;
    for (const w of answered) {
      const code = w.said.ok ? 'ok' : w.said.code;
      report.windowWrites[code] = (report.windowWrites[code] ?? 0) + 1;
      if (!w.said.ok && w.said.code !== 'board-unavailable') problems.push(`a window write on ${w.host} during ${w.fault} was answered ${w.said.code}: ${w.said.message.slice(0, 300)}`);
      const landed = events.filter((e) => e.kind === 'task-added' && e.title === w.title).length;
      if (w.said.ok && landed !== 1) problems.push(`a window write on ${w.host} during ${w.fault} was answered ok but is in the log ${landed} times`);
    }
    for (const id of claimable) {
      const l = (historyOf().get(hosts[0]!.agents[0]!) ?? []).find((x) => x.m === 'final-claim' && x.task === id);
      if (!l?.ok) problems.push(`${id} (${endState.get(id)}) could not be claimed at the end: ${l ? `${l.code} ${l.msg}` : 'never tried'}`);
    }
    return report;
  } finally {
    for (const h of hosts) {
      killedByRun.add(h.s);
      fs.writeFileSync(join(o.root, `serve-${h.name}-last.err`), h.s.err());
      try {
        h.s.proc.kill('SIGCONT');
        h.s.proc.kill('SIGKILL');
      } catch {
        // gone
      }
      const pid = ptyHostPidOf(join(h.at, 'data'));
      if (pid && alive(pid)) process.kill(pid, 'SIGTERM');
    }
    await client?.end().catch(() => undefined);
  }
}

function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function readHistories(dirs: readonly string[]): Map<string, Line[]> {
  const out = new Map<string, Line[]>();
  for (const dir of dirs) {
    for (const f of fs.readdirSync(dir)) {
      const lines = fs
        .readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line);
      out.set(f.replace(/\.jsonl$/, ''), lines);
    }
  }
  return out;
}

type Live = { agentId: string; token: number; seq: number };

/** The live claim of each task after these events: the judge's own reading, not the shared reducer's. */
function claimsAt(events: BoardEvent[]): Map<string, Live> {
  const live = new Map<string, Live>();
  for (const e of events) {
    if (e.kind === 'grant') live.set(e.taskId, { agentId: e.agentId, token: e.token, seq: e.seq });
    else if (e.kind === 'reassign') live.set(e.taskId, { agentId: e.to.agentId, token: e.to.token, seq: e.seq });
    else if (e.kind === 'claim-ended' || (e.kind === 'returned' && e.to === 'open')) live.delete(e.taskId);
  }
  return live;
}

function endedTokens(events: BoardEvent[]): Map<number, string> {
  const out = new Map<number, string>();
  for (const e of events) {
    if (e.kind === 'claim-ended') out.set(e.token, e.reason);
    else if (e.kind === 'reassign') out.set(e.from.token, 'reassigned');
  }
  return out;
}

function stateAt(events: BoardEvent[]): Map<string, string> {
  const s = new Map<string, string>();
  for (const e of events) {
    if (e.kind === 'task-added') s.set(e.taskId, 'open');
    else if (e.kind === 'grant' || e.kind === 'reassign') s.set(e.taskId, 'claimed');
    else if (e.kind === 'claim-ended') s.set(e.taskId, e.to);
    else if (e.kind === 'submitted') s.set(e.taskId, 'review');
    else if (e.kind === 'approved') s.set(e.taskId, 'done');
    else if (e.kind === 'returned') s.set(e.taskId, e.to);
    else if (e.kind === 'blocked') s.set(e.taskId, 'blocked');
    else if (e.kind === 'unblocked' || e.kind === 'reset') s.set(e.taskId, 'open');
  }
  return s;
}

/** Reasons a claim of a lost host may legitimately end with once its host is gone: only the sweep's. */
const HOST_LOST = 'host-lost';

function judge(
  events: BoardEvent[],
  histories: Map<string, Line[]>,
  faults: Fault[],
  hostOfAgent: Map<string, string>,
  hosts: Host[],
  problems: string[],
  hostLostLimit: number,
): HostChaosReport {
  const r: HostChaosReport = {
    calls: 0,
    acks: 0,
    refusals: {},
    cliRetries: 0,
    resends: 0,
    staleSent: 0,
    faults: { kill: 0, quickKill: 0, stop: 0, dbRestart: 0, dbStop: 0 },
    windowWrites: {},
    relaunches: {},
    hostLostMs: [],
    claimsLost: 0,
    events: events.length,
    finalClaims: 0,
    problems,
  };
  for (const f of faults) r.faults[f.kind]++;
  // The log: gapless positions; tokens only rise; no grant over a live claim; every agent write made under
  // the live claim of its agent, with its token.
  const live = new Map<string, Live>();
  let maxToken = 0;
  const at = new Map<number, Live | undefined>();
  const noteAt = new Map<string, Array<{ seq: number; by: string; live: Live | undefined }>>();
  const submitted = new Map<number, number>();
  const released = new Map<number, number>();
  const grants = new Map<number, { taskId: string; agentId: string }>();
  for (const [i, e] of events.entries()) {
    if (e.seq !== i + 1) {
      problems.push(`the log has a gap or disorder: position ${i + 1} holds seq ${e.seq}`);
      break;
    }
    const cur = 'taskId' in e && e.taskId ? live.get(e.taskId) : undefined;
    at.set(e.seq, cur);
    const mustHold = (agentId: string, token: number, what: string) => {
      if (!cur || cur.agentId !== agentId || cur.token !== token) problems.push(`seq ${e.seq}: ${what} by ${agentId} under token ${token}, but the live claim is ${cur ? `${cur.agentId}/${cur.token}` : 'none'}`);
    };
    switch (e.kind) {
      case 'grant':
        if (cur) problems.push(`double grant: seq ${e.seq} grants ${e.taskId} to ${e.agentId}/${e.token} while ${cur.agentId}/${cur.token} (seq ${cur.seq}) holds it`);
        if (e.token <= maxToken) problems.push(`seq ${e.seq}: token ${e.token} is not above ${maxToken}`);
        maxToken = Math.max(maxToken, e.token);
        live.set(e.taskId, { agentId: e.agentId, token: e.token, seq: e.seq });
        grants.set(e.token, { taskId: e.taskId, agentId: e.agentId });
        break;
      case 'reassign':
        mustHold(e.from.agentId, e.from.token, 'reassign from');
        if (e.to.token <= maxToken) problems.push(`seq ${e.seq}: token ${e.to.token} is not above ${maxToken}`);
        maxToken = Math.max(maxToken, e.to.token);
        live.set(e.taskId, { agentId: e.to.agentId, token: e.to.token, seq: e.seq });
        grants.set(e.to.token, { taskId: e.taskId, agentId: e.to.agentId });
        break;
      case 'renew':
        mustHold(e.agentId, e.token, `renew (${e.via})`);
        break;
      case 'claim-ended':
        mustHold(e.agentId, e.token, `claim-ended (${e.reason})`);
        live.delete(e.taskId);
        if (e.reason === 'released') released.set(e.token, (released.get(e.token) ?? 0) + 1);
        break;
      case 'submitted':
        mustHold(e.agentId, e.token, 'submitted');
        submitted.set(e.token, (submitted.get(e.token) ?? 0) + 1);
        break;
      case 'note':
        if (hostOfAgent.has(e.by) && cur?.agentId !== e.by) problems.push(`seq ${e.seq}: a note by ${e.by} on ${e.taskId}, which it does not hold (${cur ? `${cur.agentId}/${cur.token}` : 'none'})`);
        noteAt.set(e.text, [...(noteAt.get(e.text) ?? []), { seq: e.seq, by: e.by, live: cur }]);
        break;
      case 'returned':
        if (e.to === 'open') live.delete(e.taskId);
        break;
    }
  }
  const ended = endedTokens(events);
  // The histories: what each agent was told, against the log.
  for (const [agent, lines] of histories) {
    const okByKey = new Map<string, string>();
    for (const l of lines) {
      if (!l.key || l.m === 'final-claim') continue;
      r.calls++;
      r.cliRetries += l.retries ?? 0;
      if (l.resend) r.resends++;
      if (l.stale) r.staleSent++;
      if (!l.ok) {
        r.refusals[l.code ?? '?'] = (r.refusals[l.code ?? '?'] ?? 0) + 1;
        if (l.code === 'stale-token' || l.code === 'not-holder') if (!l.stale) r.claimsLost++;
        if (l.resend && okByKey.has(l.key) && l.code !== 'board-unavailable' && l.code !== 'unreachable') problems.push(`${agent} ${l.m} key ${l.key}: ok first, then refused ${l.code} on a resend`);
        continue;
      }
      r.acks++;
      const said = JSON.stringify(l.value);
      const before = okByKey.get(l.key);
      if (before !== undefined && before !== said) problems.push(`${agent} ${l.m} key ${l.key} answered ok twice, differently: ${before} then ${said}`);
      okByKey.set(l.key, said);
      if (l.stale) problems.push(`accepted stale write: ${agent} ${l.m} ${l.task} with old token ${l.token} was answered ok`);
      const v = l.value ?? {};
      switch (l.m) {
        case 'claim': {
          const g = grants.get(v.token ?? -1);
          if (!g || g.agentId !== agent || g.taskId !== v.taskId) problems.push(`lost ack: ${agent} was granted ${v.taskId}/${v.token} (key ${l.key}) but the log has ${g ? JSON.stringify(g) : 'no such grant'}`);
          break;
        }
        case 'note': {
          const found = noteAt.get(`${l.key} under ${l.token}`) ?? [];
          if (found.length !== 1) problems.push(`note ${l.key} of ${agent} acknowledged but in the log ${found.length} times`);
          for (const n of found) if (!n.live || n.live.agentId !== agent || n.live.token !== l.token) problems.push(`accepted stale write: note ${l.key} of ${agent} under ${l.token} landed at seq ${n.seq} where the live claim is ${n.live ? `${n.live.agentId}/${n.live.token}` : 'none'}`);
          break;
        }
        case 'renew': {
          // A renew's answer names no position (and moves no deadline when the last write just did): its
          // token must be a claim of this agent on this task. Whether it was still live is judged from the
          // renew events themselves, above.
          const g = grants.get(l.token ?? -1);
          if (v.token !== l.token || !g || g.agentId !== agent || g.taskId !== l.task) problems.push(`renew ${l.key} of ${agent} under ${l.token} answered ${said}, which no claim of the log matches`);
          break;
        }
        case 'done':
          if (submitted.get(l.token ?? -1) !== 1) problems.push(`done ${l.key} of ${agent} under ${l.token} acknowledged but submitted ${submitted.get(l.token ?? -1) ?? 0} times in the log`);
          break;
        case 'release':
          if (released.get(l.token ?? -1) !== 1) problems.push(`release ${l.key} of ${agent} under ${l.token} acknowledged but released ${released.get(l.token ?? -1) ?? 0} times in the log`);
          break;
      }
    }
  }
  // Faults: a host down or stopped past its lease has its claims (held at the fault) ended host-lost in time.
  for (const f of faults) {
    if (f.kind !== 'kill' && f.kind !== 'stop') continue;
    const agents = [...hostOfAgent].filter(([, h]) => h === f.host).map(([a]) => a);
    const held = [...claimsAt(events.filter((e) => e.seq <= (f.head ?? 0))).values()].filter((c) => agents.includes(c.agentId));
    if (!held.length) continue;
    if (f.endedMs === null || f.endedMs === undefined) problems.push(`${f.kind} of ${f.host}: its claims ${held.map((c) => c.token).join(',')} were not all ended within ${hostLostLimit} ms`);
    else r.hostLostMs.push(Math.round(f.endedMs));
    for (const c of held) {
      const why = ended.get(c.token);
      if (why !== undefined && why !== HOST_LOST) problems.push(`${f.kind} of ${f.host}: claim ${c.token} ended ${why}, not ${HOST_LOST}`);
    }
  }
  // A database stop ends no claim that was live at it: the board makes up for the outage before any lease is
  // judged (pg/outage.ts). Claims the agents themselves ended (done, release) are theirs to end.
  for (const f of faults) {
    if (f.kind !== 'dbStop' || f.head === undefined || f.headAfter === undefined) continue;
    const held = [...claimsAt(events.filter((e) => e.seq <= (f.head as number))).values()];
    const tokens = new Set(held.map((c) => c.token));
    for (const e of events) {
      if (e.seq <= (f.head as number) || e.seq > (f.headAfter as number) || e.kind !== 'claim-ended' || !tokens.has(e.token)) continue;
      if (e.reason === 'lapsed' || e.reason === HOST_LOST) problems.push(`database stop: claim ${e.token} of ${e.agentId} on ${e.taskId}, live at the stop, ended ${e.reason} at seq ${e.seq}`);
    }
  }
  // A serve started again on a killed one's folders adopts the agents its pty host kept: they are answered.
  for (const f of faults) {
    if (f.backAt === undefined) continue;
    for (const [agent, h] of hostOfAgent) {
      if (h !== f.host) continue;
      // An answer of the board (granted, or refused for the task's state or a token) is the new serve deciding
      // for the agent; "unreachable" or "board-unavailable" is not. Calls there must be, else nothing to judge.
      const after = (histories.get(agent) ?? []).filter((l) => l.t > (f.backAt ?? 0) && l.key);
      const answered = after.some((l) => l.ok || (l.code !== 'unreachable' && l.code !== 'board-unavailable'));
      if (after.length && !answered) problems.push(`${f.kind} of ${f.host}: its agent ${agent} got no answer of the board after its serve came back (${after.length} calls: not adopted?)`);
    }
  }
  void hosts;
  return r;
}
