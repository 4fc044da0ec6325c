import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import type { LostRecord } from '../../src-shared/board/model.js';
import { REMOTE_TASK_PREFIX } from '../../src-shared/git/taskBranch.js';
import { ThreadHost, threadDirOf, threadKeyOf } from '../../src-main/thread/threadHost.js';
import { hostLeaseOf } from '../../src-main/board/openBoard.js';
import { WORKTREES } from '../../src-main/git/boardNames.js';
import {
  agentScript,
  locksIn,
  readAcks,
  recordedUnder,
  mergedProblems,
  resolveCommit,
  rng,
  sleep,
  staleLineProblems,
  waitFor,
  waitForNoLocks,
  type Ack,
} from './fenceChaos.js';
import { GIT_IDENTITY, gitSync, makeRepo } from './gitFixture.js';
import { alive } from './processes.js';
import { ptyHostPidOf, serveOn, type ServeProc } from './serveProcess.js';
import { openTestHost } from './testHost.js';

/**
 * The git fence's chaos run (fenceChaos.ts) on two hosts sharing one PostgreSQL board, each on its own clone
 * of one bare repository, the remote. Host A runs in the test's process; host B is a `serve` of its own, so
 * the whole machine can die: B's serve, every process under it (git pushing, hooks) and its pty host with
 * its agents, SIGSTOPped together and then killed -9, most often just after the board recorded a commit of
 * B's (its push to the remote in flight) or an approval was sent to B (its push of the base in flight). B
 * then starts again on the same disk soon, or after its host lease ran out (its claims lost, its tasks taken
 * by A's agents), or, in some runs, stays dead to the end.
 *
 * Meanwhile agents on both hosts claim and commit; they are killed -9 (often inside `git commit`),
 * SIGSTOPped past their lease, their tasks reassigned to an agent on the other host (which works on on top
 * of the record, in a folder its own host made); reviews are approved on either host.
 *
 * Judged against the remote and the board's event log, it must never see:
 * - an acknowledged commit (git exited 0, the hook said nothing against it) that the board did not record
 *   under its claim's token, or that neither the remote's base nor its refs/forkbench/tasks/* reaches and the
 *   board's history does not name as lost with a dead host;
 * - in the remote's base, a merge of anything but the sha a task's last `done` froze under its own token, a
 *   commit the board never recorded, or an approved task's frozen sha missing;
 * - a line written under one claim in a commit recorded under another;
 * - a git lock left, in either live host's clone or in the remote, once every agent is gone.
 */

export interface HostsChaosOptions {
  /** The PostgreSQL database the board lives in. */
  url: string;
  durationMs: number;
  seed: number;
  /** Agents on each host. */
  agentsPerHost: number;
  /** A short host lease, so a dead host's claims end in seconds (the default is 15 s). */
  hostLeaseMs: number;
  /** The run goes past durationMs (up to MAX_STRETCH ×) until it has injected this many faults (agent
   *  kills, stops and host kills), at least one host kill, one cross-host reassign and one approval, and seen
   *  this many acknowledged commits. */
  minFaults: number;
  minAcks: number;
  log: (s: string) => void;
}

export interface HostsChaosReport {
  /** Where the run's folders are (the ack log, B's serve output): the test removes it when the run passed. */
  root: string;
  acked: number;
  recorded: number;
  /** Acknowledged commits the remote's base or task refs reach. */
  ackedOnRemote: number;
  /** Acknowledged commits not on the remote that the board names as lost with a dead host. */
  ackedNamedLost: number;
  /** Shas the board's history names as lost, all told. */
  namedLost: number;
  approved: { A: number; B: number };
  /** Approvals refused (a conflict between two tasks' lines, the base moved meanwhile, the host gone). */
  approveRefused: number;
  merged: number;
  faults: { kill: number; stop: number; reassign: number; reassignRefused: number; hostKill: number };
  /** How each host kill ended: B back soon, back after its lease ran out, or dead to the end. */
  hostKills: { restartedSoon: number; restartedPastLease: number; endedDead: boolean; duringPush: number; duringApprove: number };
  problems: string[];
}

/** How far past its duration a run may stretch to reach its minimums; a test's timeout must allow for it. */
export const MAX_STRETCH = 3;
/** Commits an agent makes under a claim before its `done`: fewer than the one-host run's 6, since here a
 *  claim is also cut short by host kills and a slower machine, and approvals need tasks that reach review. */
const COMMITS_PER_CLAIM = 3;
/** The agents' lease: short, so a SIGSTOP of STOP_MS outlives it (as the one-host run). */
const AGENT_LEASE_MS = 2000;
const STOP_MS = 2500;
/** A host kill armed by the driver fires at the next commit B records (its push then in flight), or after
 *  this long anyway. */
const ARMED_KILL_MS = 6000;
/** B up this long since its start or last return without a kill: one is armed, whatever the dice say, so
 *  every run has host kills (a seeded run of 62 s had none). */
const HOST_KILL_EVERY_MS = 8000;
/** An approval sent to B, then B killed this long after at most: inside its fetch, merge or push. */
const KILL_AFTER_APPROVE_MS = 80;
/** A window call to B that gets no answer in this long is given up: B may be dying. */
const WINDOW_CALL_MS = 8000;
/** A round of the driver that takes longer than this is said in the log (something it awaits hangs). */
const SLOW_ROUND_MS = 20_000;
/** After the faults, A's agents work on this long (past a host lease) so a dead B's tasks are taken up. */
const SETTLE_AFTER_HOST_LEASES = 2;
const SETTLE_EXTRA_MS = 4000;
/** The remote gets each recorded commit in the background: the judge waits this long for the last ones. */
const PUSHES_SETTLE_MS = 30_000;
/** The end's re-grants on A of tasks whose record is not on the remote wait this long for their folders. */
const FINAL_GRANT_MS = 40_000;
/** How long a claim on A waits for B's push of a record before it starts at the last pushed one and names
 *  the rest lost (the product's default is 30 s, longer than a whole run here). */
const PUSH_WAIT_MS = 5000;
/** Clock slack between this process's Date.now() at a kill and the board's `at` of the events around it. */
const DEATH_SLACK_MS = 500;

/** Processes that serve the remote (git on the other machine, in a real deployment): never part of B's death. */
const REMOTE_SIDE = /receive-pack|upload-pack/;

/** A host kill waiting for its moment. */
interface Armed {
  timer: NodeJS.Timeout;
  fire: (why: 'push' | 'approve' | 'timer') => void;
}

interface Agent {
  id: string;
  pid: number;
  host: 'A' | 'B';
}

/** Every process under `root` (itself included), from /proc: the remote's own processes and theirs left out. */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    try {
      if (REMOTE_SIDE.test(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'))) return;
    } catch {
      return;
    }
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/** A machine dying at once: every process of it stopped (so none forks or writes on), then killed -9. */
function killMachine(roots: number[]): number {
  const all = new Set<number>();
  for (let round = 0; round < 5; round++) {
    const found = roots.flatMap(processTree).filter((p) => !all.has(p));
    if (!found.length) break;
    for (const p of found) {
      all.add(p);
      try {
        process.kill(p, 'SIGSTOP');
      } catch {
        // gone
      }
    }
  }
  for (const p of all) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // gone
    }
  }
  return all.size;
}

async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Commits the board's history names as lost with their host (`record-rewound`), each with who and where. */
export function namedLost(log: readonly BoardEvent[]): Map<string, LostRecord> {
  const out = new Map<string, LostRecord>();
  for (const e of log) if (e.kind === 'record-rewound') for (const l of e.lost) out.set(l.sha, l);
  return out;
}

/** The sha each task's last `done` froze, when it froze it under its own token: what approval may merge. */
export function finalFrozen(log: readonly BoardEvent[]): Map<string, number> {
  const last = new Map<string, { sha: string; token: number } | null>();
  for (const e of log) if (e.kind === 'submitted') last.set(e.taskId, e.record && e.record.token === e.token ? { sha: e.record.sha, token: e.token } : null);
  const out = new Map<string, number>();
  for (const f of last.values()) if (f) out.set(f.sha, f.token);
  return out;
}

export async function runFenceChaosHosts(o: HostsChaosOptions): Promise<HostsChaosReport> {
  const random = rng(o.seed);
  const root = fs.mkdtempSync(join(tmpdir(), 'fb-chaos-hosts-'));
  const r: HostsChaosReport = {
    root,
    acked: 0,
    recorded: 0,
    ackedOnRemote: 0,
    ackedNamedLost: 0,
    namedLost: 0,
    approved: { A: 0, B: 0 },
    approveRefused: 0,
    merged: 0,
    faults: { kill: 0, stop: 0, reassign: 0, reassignRefused: 0, hostKill: 0 },
    hostKills: { restartedSoon: 0, restartedPastLease: 0, endedDead: false, duringPush: 0, duringApprove: 0 },
    problems: [],
  };
  // The remote, seeded with one commit on main; a clone of it for each host.
  const remote = join(root, 'remote.git');
  makeRepo(join(root, 'seed'));
  gitSync(root, ['init', '-q', '--bare', '-b', 'main', remote]);
  gitSync(join(root, 'seed'), ['push', '-q', remote, 'main']);
  const initial = gitSync(remote, ['rev-parse', 'main']);
  const at = { A: join(root, 'A'), B: join(root, 'B') };
  const clone = { A: join(at.A, 'project'), B: join(at.B, 'project') };
  for (const h of ['A', 'B'] as const) {
    fs.mkdirSync(at[h]);
    gitSync(root, ['clone', '-q', remote, clone[h]]);
  }
  // Each agent's acknowledgements, in its folder of claims on its own host (agentScript), under the host's
  // worktrees folder.
  const acksRoot = { A: join(threadDirOf(join(at.A, 'data'), threadKeyOf(clone.A)), WORKTREES), B: join(threadDirOf(join(at.B, 'data'), threadKeyOf(clone.B)), WORKTREES) };
  const script = { A: join(root, 'agent-A.sh'), B: join(root, 'agent-B.sh') };
  for (const h of ['A', 'B'] as const) fs.writeFileSync(script[h], agentScript({ host: h, root: at[h] }, COMMITS_PER_CLAIM), { mode: 0o755 });

  // Panes inherit their host's environment: A's from this process, B's from its serve's.
  Object.assign(process.env, GIT_IDENTITY);
  const env = { FORKBENCH_BOARD_URL: o.url };
  const { host: A } = await openTestHost({ closedBy: 'caller', folder: clone.A, dataRoot: join(at.A, 'data'), runtimeRoot: join(at.A, 'run'), liveness: false, hostLease: hostLeaseOf(String(o.hostLeaseMs)), sharedBoard: { url: o.url }, gitRemote: { pushWaitMs: PUSH_WAIT_MS } });
  let B: ServeProc | null = null;
  let bServes = 0;
  const bKey = threadKeyOf(clone.B);
  const killedB = new Set<ServeProc>();
  const startB = async (): Promise<ServeProc> => {
    const s = await serveOn({ root: at.B, project: clone.B, key: bKey, args: ['--host-lease-ms', String(o.hostLeaseMs)], env });
    const n = ++bServes;
    void s.exit.then((code) => {
      try {
        fs.writeFileSync(join(root, `serve-B-${n}.err`), s.err());
      } catch {
        // the run passed and its folder is gone
      }
      if (!killedB.has(s)) r.problems.push(`serve B exited by itself (code ${code}): ${s.err().trim().split('\n').slice(-6).join(' | ')}`);
    });
    return s;
  };
  const agents: Agent[] = [];
  const launch = async (h: 'A' | 'B'): Promise<void> => {
    if (h === 'A') {
      const a = await A.roster.launch('custom', { command: script.A });
      agents.push({ id: a.id, pid: a.pid as number, host: 'A' });
    } else if (B) {
      // A call to B in flight when B dies is never answered (the window's client drops no pending call).
      const a = await within(B.window.call('agent.launch', { key: bKey, profile: 'custom', command: script.B, cols: 200, rows: 30 }), WINDOW_CALL_MS);
      if (a) agents.push({ id: a.id, pid: a.pid as number, host: 'B' });
    }
  };
  const stopped = new Set<number>();
  /** When B died (Date.now()): a commit may be named lost only if its host died between its record and then. */
  const deaths: number[] = [];
  let bDown: Promise<void> | null = null;
  let armed: Armed | null = null;
  /** The armed kill as it is now: the driver's awaits let the board's events fire or clear it. */
  const armedNow = (): Armed | null => armed;
  const agentsOfB = () => new Set(agents.filter((a) => a.host === 'B').map((a) => a.id));

  let tornDown = false;
  /** Everything the run started ended: B's machine, A's agents, A. Once, from the run or from afterAll. */
  const teardown = async (): Promise<void> => {
    if (tornDown) return;
    tornDown = true;
    const left = armedNow();
    if (left) clearTimeout(left.timer);
    const s = B as ServeProc | null;
    if (s) killedB.add(s);
    const pty = ptyHostPidOf(join(at.B, 'data'));
    killMachine([...(s ? [s.proc.pid as number] : []), ...(pty && alive(pty) ? [pty] : [])]);
    if (s) {
      await s.exit;
      s.window.close();
    }
    for (const a of agents) {
      try {
        process.kill(-a.pid, 'SIGCONT');
        process.kill(-a.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await A.dispose();
  };
  running.set(teardown, root);
  try {
    await A.board.run((e) => e.setSettings({ leaseMs: AGENT_LEASE_MS, poisonLimit: 1000, remote: A.board.state.settings.remote ?? { name: 'origin', url: remote } }));
    B = await startB();
    for (let i = 0; i < 6; i++) await A.board.run((e) => e.addTask({ title: `chaos ${i}` }));
    let tasks = 6;
    for (let i = 0; i < o.agentsPerHost; i++) {
      await launch('A');
      await launch('B');
    }

    /**
     * B dies as a machine does; then it starts again on the same disk soon, or once its host lease ran out
     * (A's agents then take its tasks), or never (`forever`: the run's end).
     */
    const hostKill = (why: 'push' | 'approve' | 'timer', forever: boolean): void => {
      const s = B;
      if (!s || bDown) return;
      r.faults.hostKill++;
      deaths.push(Date.now());
      if (why === 'push') r.hostKills.duringPush++;
      if (why === 'approve') r.hostKills.duringApprove++;
      killedB.add(s);
      const pty = ptyHostPidOf(join(at.B, 'data'));
      const n = killMachine([s.proc.pid as number, ...(pty && alive(pty) ? [pty] : [])]);
      B = null;
      for (const a of agents.filter((x) => x.host === 'B')) {
        agents.splice(agents.indexOf(a), 1);
        stopped.delete(a.pid);
      }
      const soon = !forever && random() < 0.5;
      o.log(`B killed -9 as a machine at ${Date.now()} (${n} processes, ${why})${forever ? ', dead to the end' : soon ? ', back soon' : ', back after its lease'}`);
      if (forever) {
        r.hostKills.endedDead = true;
        bDown = s.exit.then(() => s.window.close());
        return;
      }
      bDown = (async () => {
        await s.exit;
        s.window.close();
        await sleep(soon ? 200 + random() * 600 : o.hostLeaseMs * 2 + 1000);
        B = await startB();
        for (let i = 0; i < o.agentsPerHost; i++) await launch('B');
        bUpSince = Date.now();
        if (soon) r.hostKills.restartedSoon++;
        else r.hostKills.restartedPastLease++;
        o.log(`B back at ${Date.now()}`);
      })().finally(() => {
        bDown = null;
      });
    };
    const arm = (forever = false) => {
      if (armed || !B || bDown) return;
      const fire = (why: 'push' | 'approve' | 'timer') => {
        if (armed?.fire !== fire) return;
        clearTimeout(armed.timer);
        armed = null;
        hostKill(why, forever);
      };
      armed = { timer: setTimeout(() => fire('timer'), ARMED_KILL_MS), fire };
    };
    // The kill armed fires the moment the board records a commit of B's: its push has just begun.
    A.onBoardEvent.event((e) => {
      if (armed && e.kind === 'branch-recorded' && agentsOfB().has(e.record.by)) armed.fire('push');
    });

    const acked = () => readAcks(acksRoot.A, acksRoot.B).length;
    const faults = () => r.faults.kill + r.faults.stop + r.faults.hostKill;
    const enough = () => faults() >= o.minFaults && r.faults.hostKill >= 1 && r.faults.reassign >= 1 && r.approved.A + r.approved.B >= 1 && acked() >= o.minAcks;
    const endsDead = random() < 0.3;
    const t0 = Date.now();
    let bUpSince = t0;
    /** Approvals under way, by task. */
    const approving = new Map<string, Promise<void>>();
    while (Date.now() - t0 < o.durationMs || (!enough() && Date.now() - t0 < MAX_STRETCH * o.durationMs)) {
      await sleep(250 + random() * 450);
      const live = agents.filter((a) => a.host === 'A' || (B && !bDown));
      const pick = live[Math.floor(random() * live.length)];
      const roll = random();
      const slow = setTimeout(() => o.log(`driver: a round (roll ${roll.toFixed(2)}) still waits after ${SLOW_ROUND_MS} ms`), SLOW_ROUND_MS);
      try {
        if (!pick) continue;
        if (roll < 0.14) {
          // kill -9 of an agent, often inside git
          process.kill(-pick.pid, 'SIGKILL');
          agents.splice(agents.indexOf(pick), 1);
          stopped.delete(pick.pid);
          r.faults.kill++;
          await launch(pick.host);
        } else if (roll < 0.26 && !stopped.has(pick.pid)) {
          // a pause past the lease, then back
          process.kill(-pick.pid, 'SIGSTOP');
          stopped.add(pick.pid);
          r.faults.stop++;
          setTimeout(() => {
            try {
              process.kill(-pick.pid, 'SIGCONT');
            } catch {
              // killed meanwhile
            }
            stopped.delete(pick.pid);
          }, STOP_MS);
        } else if (roll < 0.5) {
          // A task held on one host given to an agent on the other: its host makes the folder at the record.
          const hostOf = new Map(agents.map((a) => [a.id, a.host]));
          const held = [...A.board.state.tasks.values()].filter((t) => t.state === 'claimed' && t.claim && hostOf.has(t.claim.agentId));
          const t = held[Math.floor(random() * held.length)];
          const from = t?.claim ? hostOf.get(t.claim.agentId) : undefined;
          const others = live.filter((a) => a.host !== from);
          const to = others[Math.floor(random() * others.length)];
          if (t && to) {
            const res = await A.board.run((e) => e.assign(t.id, to.id));
            if (res.ok) r.faults.reassign++;
            else r.faults.reassignRefused++;
          }
        } else if (roll < 0.56 || Date.now() - bUpSince > HOST_KILL_EVERY_MS) {
          if (!armedNow() && B && !bDown) {
            arm();
            o.log('host kill armed: B dies at its next recorded commit');
          }
        } else {
          // Approvals run beside the faults (one at a time per task): under load one takes seconds, and faults
          // land while its fetch, merge and push are in flight.
          for (const t of [...A.board.state.tasks.values()].filter((x) => x.state === 'review' && !approving.has(x.id))) {
            const onB = B && !bDown && random() < 0.5 ? B : null;
            const killAfter = armedNow() && onB && random() < 0.5 ? random() * KILL_AFTER_APPROVE_MS : null;
            const run = onB
              ? within(
                  onB.window.call('task.approve', { key: bKey, taskId: t.id }).then(
                    () => r.approved.B++,
                    (err: Error) => {
                      r.approveRefused++;
                      if (!/conflict/i.test(err.message)) o.log(`approve ${t.id} on B: ${err.message}`);
                    },
                  ),
                  WINDOW_CALL_MS,
                )
              : A.worktrees.approve(t.id).then(
                  () => r.approved.A++,
                  (err: Error & { problem?: string }) => {
                    r.approveRefused++;
                    if (err.problem !== 'merge-conflict') o.log(`approve ${t.id} on A: ${err.message}`);
                  },
                );
            approving.set(t.id, run.then(() => undefined).finally(() => approving.delete(t.id)));
            if (killAfter !== null) {
              await sleep(killAfter);
              armedNow()?.fire('approve');
            }
          }
        }
        if ([...A.board.state.tasks.values()].filter((t) => t.state === 'open').length < 2) {
          await A.board.run((e) => e.addTask({ title: `chaos ${tasks++}` }));
        }
      } catch (err) {
        o.log(`driver: ${(err as Error).message}`);
      } finally {
        clearTimeout(slow);
      }
    }
    await Promise.all(approving.values());
    // The end. B comes back from a kill under way, or dies now for good (a run in three); A's agents work on
    // past a host lease, so a dead B's tasks are taken up on A, from what reached the remote.
    const left = armedNow();
    if (left) {
      clearTimeout(left.timer);
      armed = null;
    }
    await bDown;
    if (endsDead) {
      arm(true);
      await waitFor(() => !B, ARMED_KILL_MS + 1000);
      await bDown;
    }
    o.log(`faults over after ${Date.now() - t0} ms (${acked()} acks); A's agents work on past B's lease`);
    for (const pid of stopped) process.kill(-pid, 'SIGCONT');
    await sleep(o.hostLeaseMs * SETTLE_AFTER_HOST_LEASES + SETTLE_EXTRA_MS);
    for (const a of agents) {
      try {
        process.kill(-a.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await waitFor(() => A.roster.agents().every((a) => a.status === 'exited'), 10_000);
    await A.worktrees.git?.idle();

    // Tasks whose record is not on the remote: a claim on A now, which starts at what reached it and names
    // what did not (the issue's re-grant on another host), unless B, alive, pushes it meanwhile.
    const judge = (log: BoardEvent[]) => judgeAcks(log, readAcks(acksRoot.A, acksRoot.B), remote, clone, deaths);
    const judgeNow = async () => judge(await A.board.log());
    let pending = (await judgeNow()).unsettled;
    const regrant = [...new Set(pending.map((a) => a.task))].filter((id) => {
      const t = A.board.state.tasks.get(id);
      return t && (t.state === 'open' || t.state === 'needs-attention');
    });
    if (regrant.length) {
      const idle = await A.roster.launch('custom', { command: 'exec sleep 600' });
      for (const id of regrant) {
        const g = await A.board.run((e) => e.assign(id, idle.id));
        o.log(`end: ${id}'s record is not on the remote: given to ${idle.id} on A (${g.ok ? 'granted' : g.error.message})`);
      }
      await waitFor(() => regrant.every((id) => { const t = A.board.state.tasks.get(id); return !t || t.state !== 'claimed' || t.worktree?.path.startsWith(at.A) === true; }), FINAL_GRANT_MS);
    }
    const t1 = Date.now();
    while (pending.length && Date.now() - t1 < PUSHES_SETTLE_MS) {
      await sleep(500);
      pending = (await judgeNow()).unsettled;
    }
    await A.worktrees.git?.idle();

    o.log(`judged ${Date.now() - t0} ms after the start (${pending.length} acks neither on the remote nor named lost)`);
    const log = await A.board.log();
    fs.writeFileSync(join(root, 'events.jsonl'), log.map((e) => JSON.stringify(e)).join('\n'));
    const j = judge(log);
    Object.assign(r, { acked: j.acked, recorded: j.recorded, ackedOnRemote: j.onRemote, ackedNamedLost: j.namedLostAcks, namedLost: j.namedLost });
    r.problems.push(...j.problems);
    for (const a of j.unsettled) r.problems.push(`acknowledged ${a.sha?.slice(0, 10) ?? a.short} (${a.task} under token ${a.token}, host ${a.host}) is neither reached by the remote's main or ${REMOTE_TASK_PREFIX}* nor named lost by the board`);
    r.merged = mergedProblems(remote, initial, 'main', finalFrozen(log), recordedUnder(log), r.problems);
    // An approval the board says happened: its frozen sha is in the remote's base.
    const frozenOf = new Map<string, string>();
    for (const e of log) {
      if (e.kind === 'submitted' && e.record) frozenOf.set(e.taskId, e.record.sha);
      if (e.kind === 'approved') {
        const sha = frozenOf.get(e.taskId);
        if (sha && !onRemoteBase(remote, sha)) r.problems.push(`${e.taskId} was approved (seq ${e.seq}) but its frozen ${sha.slice(0, 10)} is not in the remote's main`);
      }
    }
    staleLineProblems((sha) => [remote, clone.A, clone.B].find((repo) => hasCommit(repo, sha)), recordedUnder(log), r.problems);
    // Locks: the remote's, A's, and B's when B is alive (a dead machine's disk is nobody's to clean).
    for (const dir of [remote, join(clone.A, '.git'), ...(B ? [join(clone.B, '.git')] : [])]) for (const l of await waitForNoLocks(dir, 12_000)) r.problems.push(`git lock left: ${l}`);
    if (!B) {
      const left = locksIn(join(clone.B, '.git'));
      if (left.length) o.log(`B dead at the end: its clone keeps ${left.length} lock(s), nobody's to clear: ${left.join(' ')}`);
    }
    return r;
  } finally {
    await teardown();
    running.delete(teardown);
  }
}

/** Runs not yet torn down: a run that hangs past its test's timeout never reaches its own `finally`. */
const running = new Map<() => Promise<void>, string>();

/** For a test file's afterAll: every run still standing is ended (B's processes, A's agents, A itself); the
 *  folders of such a run are kept, and their place returned, for reading back. */
export async function endChaosHostsRuns(): Promise<string[]> {
  const left = [...running];
  running.clear();
  for (const [t] of left) await t().catch(() => undefined);
  return left.map(([, root]) => root);
}

function hasCommit(repo: string, sha: string): boolean {
  try {
    gitSync(repo, ['cat-file', '-e', `${sha}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

function onRemoteBase(remote: string, sha: string): boolean {
  return hasCommit(remote, sha) && gitSync(remote, ['for-each-ref', '--contains', sha, '--format=%(refname)', 'refs/heads/main']).length > 0;
}

/** Whether the remote's base or one of Forkbench's task refs there reaches `sha`. */
function onRemote(remote: string, sha: string): boolean {
  return hasCommit(remote, sha) && gitSync(remote, ['for-each-ref', '--contains', sha, '--format=%(refname)', 'refs/heads/main', REMOTE_TASK_PREFIX]).length > 0;
}

interface AckJudged extends Ack {
  sha?: string;
}

/** The acknowledgements against the board's record and the remote; `unsettled`: not on the remote and not
 *  named lost (yet: a push may be under way). */
function judgeAcks(log: BoardEvent[], acks: Ack[], remote: string, clone: { A: string; B: string }, deaths: readonly number[]) {
  const recorded = recordedUnder(log);
  const lost = namedLost(log);
  const recordedAt = new Map<string, number>();
  const rewoundAt = new Map<string, number>();
  for (const e of log) {
    if (e.kind === 'branch-recorded' && !recordedAt.has(e.record.sha)) recordedAt.set(e.record.sha, e.at);
    if (e.kind === 'record-rewound') for (const l of e.lost) if (!rewoundAt.has(l.sha)) rewoundAt.set(l.sha, e.at);
  }
  const problems: string[] = [];
  const unsettled: AckJudged[] = [];
  let onRemoteN = 0;
  let namedLostAcks = 0;
  for (const a of acks) {
    const repo = a.host === 'B' ? clone.B : clone.A;
    const sha = a.short ? resolveCommit(repo, a.short) : undefined;
    if (!sha) {
      problems.push(`an acknowledged commit with no sha in ${a.host}'s clone (the rest is what git said): ${a.line}`);
      continue;
    }
    if (recorded.get(sha) !== a.token) problems.push(`acknowledged ${a.task} ${sha.slice(0, 10)} under token ${a.token} (host ${a.host}) is not on the board's record (${recorded.get(sha) ?? 'absent'})`);
    if (onRemote(remote, sha)) onRemoteN++;
    else if (lost.has(sha)) {
      namedLostAcks++;
      // Only a host that died loses what it recorded: A never does, so nothing of A's may be named lost.
      if (a.host !== 'B') problems.push(`acknowledged ${sha.slice(0, 10)} (${a.task}, token ${a.token}) of host ${a.host}, which never died, is named lost by the board (${JSON.stringify(lost.get(sha))})`);
      else {
        const from = (recordedAt.get(sha) ?? 0) - DEATH_SLACK_MS;
        const to = (rewoundAt.get(sha) ?? 0) + DEATH_SLACK_MS;
        if (!deaths.some((d) => d >= from && d <= to)) problems.push(`acknowledged ${sha.slice(0, 10)} (${a.task}, token ${a.token}) of B is named lost, but B did not die between its record and the rewind`);
      }
    }
    else unsettled.push({ ...a, sha });
  }
  return { acked: acks.length, recorded: recorded.size, onRemote: onRemoteN, namedLostAcks, namedLost: lost.size, problems, unsettled };
}
