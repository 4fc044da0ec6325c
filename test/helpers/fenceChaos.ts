import * as fs from 'node:fs';
import { join } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import type { ThreadHost } from '../../src-main/thread/threadHost.js';
import type { Result } from '../../src-shared/board/result.js';
import { Fixture, GIT_IDENTITY, gitSync, sh } from './gitFixture.js';
import { ParkedJudge } from './parkedChaos.js';

/**
 * A chaos run against the git fence, judged from git's history and the board's record: agents claim and
 * commit in real panes while they are killed -9 (often inside `git commit`), their panes closed, SIGSTOPped
 * past their lease, reassigned, and their work approved into the merge queue and taken back from it
 * (reassigned, released, rejected) while it lands. What it must never see:
 * - an acknowledged commit (git exited 0 and the hook said nothing against it) that the board did not
 *   record, or that no ref reaches any more;
 * - a commit merged into the base that the board did not record, or a merge of anything but the sha a
 *   `done` froze under the token that said done;
 * - a line written under one claim in a commit recorded under another;
 * - a git lock left once every agent is gone;
 * and of the merge queue (issue 49): main moved to a merge the board did not agree to, or of a commit other
 * than the one approved under the token it was approved for, or after a take-back of that approval was
 * answered; an entry left in the queue for good; a task branch left at a commit the board refused.
 */

export interface ChaosOptions {
  durationMs: number;
  agents: number;
  seed: number;
  /** The run goes on past durationMs until it has injected this many kills and stops and seen this many
   *  acknowledged commits: on a loaded machine the rounds are slower, and a run where little happened
   *  proves little. It never goes past MAX_STRETCH × durationMs. */
  minFaults?: number;
  minAcks?: number;
  log?: (s: string) => void;
  /** Issue 47 item 5: parked folders are saved and removed after this grace, each save judged file by file,
   *  and the folders left at the end counted (ChaosReport.folders). Absent: the Thread's default grace. */
  parkedGraceMs?: number;
}

/** How far past its duration a run may stretch to reach its minimums; a test's timeout must allow for it. */
export const MAX_STRETCH = 3;

export interface ChaosReport {
  acked: number;
  recorded: number;
  approved: number;
  merged: number;
  kills: number;
  stops: number;
  reassigns: number;
  /** Panes closed by the person (the agent relaunched), often while it commits. */
  closes: number;
  /** Take-backs of approved work the board answered: reassigns, releases, rejects of queued tasks. */
  takeBacks: number;
  notRecorded: number;
  /** With parkedGraceMs: parked folders saved (each compared file by file), and this board's claim folders on
   *  disk at the end, once every agent is gone and the clean-up has had its grace, beside the claims live then
   *  and the tasks in review (whose folder stays for their review). */
  saved?: number;
  /** Claim folders made in the run (each grant's), for scale: without the clean-up, all but the merged stay. */
  foldersMade?: number;
  folders?: number;
  liveClaims?: number;
  inReview?: number;
  problems: string[];
}

/** A small deterministic generator, so a failing run can be replayed from its seed. */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x1_0000_0000;
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long the merge queue gets, once the agents are gone, to land or give back what it holds: a landing is
 *  a merge and a ref move (well under a second each, even on a loaded machine), and a few are queued at most. */
const QUEUE_SETTLE_MS = 30_000;

/** How long the parked folders' clean-up gets past its grace once the agents are gone: a folder is a few git
 *  commands (a dozen when its work is saved), and a run can end with tens of folders to clean on a loaded
 *  2-core machine, where a git takes a few hundred ms. A run's test timeout allows for it. */
export const PARKED_SETTLE_MS = 120_000;

/** Where an agent runs, for a run of several hosts: the ack lines name the host (`@A`), whose clone resolves
 *  their short shas; and an agent given a task by a person (a reassign) works on it, in its own host's
 *  folder for it (`root`), before it claims another. */
export interface AgentHome {
  host: string;
  root: string;
}

/** The agent's loop: claim the next open task, append a line tagged with its claim, commit, a few times
 *  (`commitsPerClaim`), then say done; anything refused sends it back to claiming. Acknowledged commits go to
 *  the agent's own log in its folder of claims (the folder its claim's folder is in, under the host's
 *  worktrees folder): a contained agent writes nowhere else the test can read. */
export function agentScript(home?: AgentHome, commitsPerClaim = 6): string {
  return String.raw`#!/bin/sh
set -u
n=0
while :; do
  wt=''
  ${home ? heldTaskStep(home) : ''}
  if [ -z "$wt" ]; then
    out=$(forkbench claim --json 2>/dev/null)
    case "$out" in *'"ok":true'*) ;; *) sleep 0.2; continue ;; esac
    task=$(printf '%s' "$out" | sed -n 's/.*"taskId":"\(T-[0-9]*\)".*/\1/p')
    token=$(printf '%s' "$out" | sed -n 's/.*"token":\([0-9]*\).*/\1/p')
    wt=$(printf '%s' "$out" | sed -n 's/.*"path":"\([^"]*\)".*/\1/p')
  fi
  cd "$wt" 2>/dev/null || continue
  i=0
  ok=1
  while [ $i -lt ${commitsPerClaim} ]; do
    n=$((n + 1))
    echo "$task token=$token n=$n" >> work.txt
    git add work.txt 2>/dev/null
    res=$(git commit -m "$task token $token n $n" 2>&1)
    code=$?
    case "$res" in *"NOT RECORDED"*) code=99 ;; esac
    if [ $code -ne 0 ]; then ok=0; break; fi
    # The acknowledgement is what git printed; the judge resolves it, since by now a stopped shell's worktree
    # may be gone (its claim lapsed and the folder went to the next holder).
    # "[forkbench/T-1 abc1234]", or "[detached HEAD abc1234]" when the host took the folder off the branch
    # between the commit's ref update and git's summary line.
    short=$(printf '%s' "$res" | sed -n 's/^\[.* \([0-9a-f]\{4,\}\)\].*/\1/p' | head -1)
    echo "ACK $task $token $short${home ? ` @${home.host} ms=$(date +%s%3N)` : ''} $(printf '%s' "$res" | tr '\n' ' ')" >> "$(dirname "$wt")"/acks.log
    i=$((i + 1))
    sleep 0.05
  done
  [ $ok -eq 1 ] && forkbench done "$task" --token "$token" >/dev/null 2>&1
  cd /
done
`;
}

/**
 * A task a person gave this agent (a reassign) is worked on before another is claimed: the board names the
 * holder and token, `show` the folder, once its host made it (a path under the agent's own host's root: a
 * folder the board names on another host is not this machine's).
 */
function heldTaskStep(home: AgentHome): string {
  const pick = `let s='';process.stdin.on('data',(d)=>(s+=d)).on('end',()=>{try{const t=JSON.parse(s).result.tasks.find((x)=>x.state==='claimed'&&x.claim&&x.claim.agentId===process.env.FORKBENCH_AGENT_ID);if(t)console.log(t.id+' '+t.claim.token)}catch{}})`;
  return String.raw`held=$(forkbench board --json 2>/dev/null | '${process.execPath}' -e "${pick}")
  if [ -n "$held" ]; then
    task=$(echo "$held" | cut -d' ' -f1)
    token=$(echo "$held" | cut -d' ' -f2)
    wt=$(forkbench show "$task" --json 2>/dev/null | sed -n 's/.*"path":"\([^"]*\)".*/\1/p')
    case "$wt" in '${home.root}'/*) ;; *) wt='' ;; esac
  fi`;
}

export async function runFenceChaos(fx: Fixture, o: ChaosOptions): Promise<ChaosReport> {
  const log = o.log ?? (() => undefined);
  const random = rng(o.seed);
  Object.assign(process.env, GIT_IDENTITY); // panes inherit the host's environment
  const parked = o.parkedGraceMs ? new ParkedJudge() : null;
  const { host, folder } = await fx.host(parked ? { parked: parked.seams } : {});
  parked?.attach(host, folder);
  await host.board.run((e) => e.setSettings({ leaseMs: 2000, poisonLimit: 1000, ...(o.parkedGraceMs ? { parkedGraceMs: o.parkedGraceMs } : {}) }));
  const initial = gitSync(folder, ['rev-parse', 'main']);
  const dir = fx.tmp();
  const ackLog = host.worktrees.require().names.worktreesRoot;
  const script = join(dir, 'agent.sh');
  // Three commits a claim, not six: dones come sooner, so the merge queue has work to land and take back.
  fs.writeFileSync(script, agentScript(undefined, 3), { mode: 0o755 });
  let notRecorded = 0;
  host.roster.relay.onData.event(({ data }) => {
    notRecorded += data.split('NOT RECORDED').length - 1;
  });
  const events: BoardEvent[] = [];
  host.onBoardEvent.event((e) => events.push(e));
  for (let i = 0; i < 6; i++) await host.board.run((e) => e.addTask({ title: `chaos ${i}` }));
  const agents: Array<{ id: string; pid: number }> = [];
  const launch = async () => {
    const a = await host.roster.launch('custom', { command: script });
    agents.push({ id: a.id, pid: a.pid as number });
  };
  for (let i = 0; i < o.agents; i++) await launch();
  const r: ChaosReport = { acked: 0, recorded: 0, approved: 0, merged: 0, kills: 0, stops: 0, reassigns: 0, closes: 0, takeBacks: 0, notRecorded: 0, problems: [] };
  const stopped = new Set<number>();
  const t0 = Date.now();
  let tasks = 6;
  const acked = () => readAcks(ackLog).length;
  const enough = () => r.kills + r.stops >= (o.minFaults ?? 0) && acked() >= (o.minAcks ?? 0);
  while (Date.now() - t0 < o.durationMs || (!enough() && Date.now() - t0 < MAX_STRETCH * o.durationMs)) {
    await sleep(250 + random() * 450);
    const pick = agents[Math.floor(random() * agents.length)] as { id: string; pid: number };
    const roll = random();
    try {
      if (roll < 0.15) {
        // kill -9, often while the agent is inside git
        process.kill(-pick.pid, 'SIGKILL');
        agents.splice(agents.indexOf(pick), 1);
        r.kills++;
        await launch();
      } else if (roll < 0.2 && !stopped.has(pick.pid)) {
        // the person closes the pane, often while the agent is inside git
        agents.splice(agents.indexOf(pick), 1);
        await host.roster.close(pick.id);
        r.closes++;
        await launch();
      } else if (roll < 0.32 && !stopped.has(pick.pid)) {
        // a pause past the lease (Jepsen's pause fault), then back
        process.kill(-pick.pid, 'SIGSTOP');
        stopped.add(pick.pid);
        r.stops++;
        setTimeout(() => {
          try {
            process.kill(-pick.pid, 'SIGCONT');
          } catch {
            // killed meanwhile
          }
          stopped.delete(pick.pid);
        }, 2500);
      } else if (roll < 0.6 && roll >= 0.5) {
        // A take-back of approved work, mostly while it waits in the merge queue or lands: reassigned to another
        // agent, released to the backlog, or rejected back to its holder.
        const approved = [...host.board.state.tasks.values()].filter((t) => t.queued);
        const inReview = [...host.board.state.tasks.values()].filter((t) => t.state === 'review');
        const t = (approved.length ? approved : inReview)[Math.floor(random() * (approved.length || inReview.length))];
        const how = random();
        const to = agents.find((a) => a.id !== t?.claim?.agentId);
        if (t) {
          const res = await host.board.run((e): Result<unknown> => (how < 0.4 && t.claim && to ? e.assign(t.id, to.id) : how < 0.7 ? e.userRelease(t.id) : e.rejectReview(t.id, 'chaos: not like this')));
          if (res.ok) r.takeBacks++;
        }
      } else if (roll < 0.5) {
        const held = [...host.board.state.tasks.values()].filter((t) => t.state === 'claimed' && t.claim);
        const t = held[Math.floor(random() * held.length)];
        const to = agents.find((a) => a.id !== t?.claim?.agentId);
        if (t && to) {
          const res = await host.board.run((e) => e.assign(t.id, to.id));
          if (res.ok) r.reassigns++;
        }
      } else {
        // Approvals join the merge queue and land in the background, so take-backs meet them there.
        for (const t of [...host.board.state.tasks.values()].filter((x) => x.state === 'review' && !x.queued)) {
          await host.worktrees.approve(t.id, 'user', undefined, { wait: false }).then(
            () => r.approved++,
            (err: Error) => log(`approve ${t.id}: ${err.message}`),
          );
        }
      }
      if ([...host.board.state.tasks.values()].filter((t) => t.state === 'open').length < 2) {
        await host.board.run((e) => e.addTask({ title: `chaos ${tasks++}` }));
      }
    } catch (err) {
      log(`driver: ${(err as Error).message}`);
    }
  }
  // The end: every agent goes at once (kill -9), and the host gets to clear what they left.
  for (const pid of stopped) process.kill(-pid, 'SIGCONT');
  for (const a of agents) {
    try {
      process.kill(-a.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await waitFor(() => host.roster.agents().every((a) => a.status === 'exited'), 10_000);
  // The queue lands or gives back what it holds; one that never does is stuck.
  await Promise.race([host.queue?.idle(), sleep(QUEUE_SETTLE_MS)]);
  await host.worktrees.git?.idle();
  if (parked && o.parkedGraceMs) {
    // Every claim ended with its agent: what stays is the folder of each task in review. The clean-up gets its
    // grace and a sweep's time past it (a sweep is a few git commands per folder, seconds under load).
    const tasks = () => [...host.board.state.tasks.values()];
    const keep = () => tasks().filter((t) => t.claim || t.state === 'review' || t.queued).length;
    // Swept until done rather than waited on: each sweep finishes every folder due when it starts.
    const cleaner = host.worktrees.require().parked;
    const deadline = Date.now() + o.parkedGraceMs + PARKED_SETTLE_MS;
    while (parked.foldersOnDisk(host) > keep() && Date.now() < deadline) {
      await cleaner.sweep();
      await sleep(250);
    }
    await host.worktrees.git?.idle();
    r.folders = parked.foldersOnDisk(host);
    r.liveClaims = tasks().filter((t) => t.claim).length;
    r.inReview = tasks().filter((t) => t.state === 'review').length;
    r.saved = parked.saved;
    r.foldersMade = events.filter((e) => e.kind === 'worktree-set').length;
    parked.refsProblems(host);
    r.problems.push(...parked.problems);
  }
  r.notRecorded = notRecorded;
  await judge(host, folder, initial, ackLog, events, r);
  for (const t of host.board.state.tasks.values()) if (t.queued) r.problems.push(`${t.id} is still in the merge queue ${QUEUE_SETTLE_MS / 1000} s after the last approval: the queue is stuck`);
  queueProblems(folder, initial, 'main', await host.board.log(), r.problems);
  strayProblems(host, folder, r.problems);
  const locks = await waitForNoLocks(join(folder, '.git'), 12_000);
  for (const l of locks) r.problems.push(`git lock left: ${l}`);
  return r;
}

async function judge(host: ThreadHost, folder: string, initial: string, ackLog: string, events: BoardEvent[], r: ChaosReport): Promise<void> {
  const recorded = recordedUnder(await host.board.log());
  r.recorded = recorded.size;
  const acks = readAcks(ackLog);
  r.acked = acks.length;
  for (const a of acks) {
    const sha = a.short ? resolveCommit(folder, a.short) : undefined;
    if (!sha) {
      r.problems.push(`an acknowledged commit with no sha (the rest is what git said): ${a.line}`);
      continue;
    }
    if (recorded.get(sha) !== a.token) r.problems.push(`acknowledged ${a.task} ${sha.slice(0, 10)} under token ${a.token} is not on the board's record (${recorded.get(sha) ?? 'absent'})`);
    if (!gitSync(folder, ['for-each-ref', '--contains', sha, '--format=%(refname)'])) r.problems.push(`acknowledged ${sha.slice(0, 10)} is reachable from no ref: lost`);
  }
  r.merged = mergedProblems(folder, initial, 'main', frozenUnderOwnToken(events), recorded, r.problems);
  staleLineProblems(() => folder, recorded, r.problems);
}

/** An agent's acknowledgement as its script wrote it: `ACK T-n TOKEN SHORT [@HOST] what git said`. */
export interface Ack {
  task: string;
  token: number;
  /** The abbreviated sha git printed, or '' when the summary line had none. */
  short: string;
  /** The host whose agent it was (runs of several hosts), whose clone resolves `short`. */
  host?: string;
  line: string;
}

/** Every agent's acknowledgements, from each agent's log under the hosts' worktrees folders (agentScript):
 *  `<worktrees>/<board>/<agent>/acks.log`. */
export function readAcks(...acksRoots: string[]): Ack[] {
  const under = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).map((name) => join(dir, name)) : []);
  const logs = acksRoots.flatMap((root) => under(root).flatMap((board) => under(board).map((agent) => join(agent, 'acks.log'))));
  return logs
    .filter((f) => fs.existsSync(f))
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('\n')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [, task = '', token = '', short = '', at = ''] = line.split(' ');
      return { task, token: Number(token), short: /^[0-9a-f]{4,40}$/.test(short) ? short : '', ...(at.startsWith('@') ? { host: at.slice(1) } : {}), line };
    });
}

/** Each commit the board recorded, with the token of the claim it was recorded under. */
export function recordedUnder(log: readonly BoardEvent[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of log) if (e.kind === 'branch-recorded') out.set(e.record.sha, e.record.token);
  return out;
}

/** The shas a `done` froze under the very token that said done. */
export function frozenUnderOwnToken(log: readonly BoardEvent[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of log) if (e.kind === 'submitted' && e.record && e.record.token === e.token) out.set(e.record.sha, e.token);
  return out;
}

/**
 * What reached `base` of `repo` since `initial`: merges of frozen shas (each the second parent of a merge on
 * the first-parent line), made of recorded commits only. Problems are added; returns how many merges.
 */
export function mergedProblems(repo: string, initial: string, base: string, frozen: ReadonlyMap<string, number>, recorded: ReadonlyMap<string, number>, problems: string[]): number {
  const merges = gitSync(repo, ['rev-list', '--merges', '--first-parent', `${initial}..${base}`]).split('\n').filter(Boolean);
  for (const m of merges) {
    const second = gitSync(repo, ['rev-parse', `${m}^2`]);
    if (!frozen.has(second)) problems.push(`merge ${m.slice(0, 10)} brought in ${second.slice(0, 10)}, which no done froze under its own token`);
  }
  for (const c of gitSync(repo, ['rev-list', '--no-merges', `${initial}..${base}`]).split('\n').filter(Boolean))
    if (!recorded.has(c)) problems.push(`commit ${c.slice(0, 10)} is in ${base} but the board never recorded it`);
  return merges.length;
}

/** No stale lines: every line a recorded commit adds was written under the claim it is recorded under.
 *  `repoOf` names a repository that holds the commit (undefined: none does, and that is said). */
export function staleLineProblems(repoOf: (sha: string) => string | undefined, recorded: ReadonlyMap<string, number>, problems: string[]): void {
  for (const [sha, token] of recorded) {
    if (token === 0) continue;
    const repo = repoOf(sha);
    if (!repo) {
      problems.push(`recorded ${sha.slice(0, 10)} (token ${token}) is in no repository to read its lines from`);
      continue;
    }
    const added = gitSync(repo, ['show', '--format=', '--unified=0', sha, '--', 'work.txt'])
      .split('\n')
      .filter((l) => l.startsWith('+') && !l.startsWith('+++'));
    for (const l of added) if (!l.includes(` token=${token} `)) problems.push(`commit ${sha.slice(0, 10)} recorded under token ${token} adds a line of another claim: ${l}`);
  }
}

export function resolveCommit(folder: string, short: string): string | undefined {
  try {
    return gitSync(folder, ['rev-parse', '--verify', '--quiet', `${short}^{commit}`]) || undefined;
  } catch {
    return undefined;
  }
}

export async function waitFor(cond: () => boolean, ms: number): Promise<void> {
  const t0 = Date.now();
  while (!cond() && Date.now() - t0 < ms) await sleep(50);
}

export function locksIn(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.lock')) out.push(join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name));
  }
  return out;
}

export async function waitForNoLocks(gitDir: string, ms: number): Promise<string[]> {
  const t0 = Date.now();
  let left = locksIn(gitDir);
  while (left.length && Date.now() - t0 < ms) {
    await sleep(100);
    left = locksIn(gitDir);
  }
  return left;
}

export { sh };

/** Events that take an approval back: the task left the queue, was sent back, reassigned, released to the
 *  backlog, or said done again. */
function takesBack(e: BoardEvent): boolean {
  return e.kind === 'unqueued' || e.kind === 'returned' || e.kind === 'reassign' || e.kind === 'submitted' || (e.kind === 'claim-ended' && e.to !== 'review');
}

/**
 * The merge queue as git's history and the board's record show it (issue 49): each merge on `base`'s
 * first-parent line since `initial` is one the board agreed to land (queue-committed), of exactly the commit
 * of the approval that stood then (its last `queued` entry, nothing taking it back between), under the token
 * of the claim that said done; the task was approved after it, and nothing took it back between the board's
 * agreement and that approval (a take-back answered then would have lost).
 */
export function queueProblems(repo: string, initial: string, base: string, log: readonly BoardEvent[], problems: string[]): void {
  const agreed = new Map<string, Extract<BoardEvent, { kind: 'queue-committed' }>>();
  for (const e of log) if (e.kind === 'queue-committed' && e.merge) agreed.set(e.merge, e);
  for (const m of gitSync(repo, ['rev-list', '--merges', '--first-parent', `${initial}..${base}`]).split('\n').filter(Boolean)) {
    const c = agreed.get(m);
    if (!c) {
      problems.push(`${base} moved to the merge ${m.slice(0, 10)}, which the board never agreed to land`);
      continue;
    }
    const mine = log.filter((e) => (e as { taskId?: string }).taskId === c.taskId);
    const approval = mine.filter((e) => e.kind === 'queued' && e.seq < c.seq).at(-1) as Extract<BoardEvent, { kind: 'queued' }> | undefined;
    if (!approval) {
      problems.push(`the merge ${m.slice(0, 10)} of ${c.taskId} reached ${base} with no approval before it`);
      continue;
    }
    const back = mine.find((e) => e.seq > approval.seq && e.seq < c.seq && takesBack(e));
    if (back) problems.push(`${c.taskId} was taken back (${back.kind}, #${back.seq}) after its approval (#${approval.seq}), and its merge ${m.slice(0, 10)} still reached ${base}`);
    const second = gitSync(repo, ['rev-parse', `${m}^2`]);
    if (second !== approval.sha) problems.push(`the merge ${m.slice(0, 10)} of ${c.taskId} brought in ${second.slice(0, 10)}, not ${approval.sha?.slice(0, 10)}, the commit approved`);
    const froze = mine.filter((e) => e.kind === 'submitted' && e.seq < approval.seq).at(-1) as Extract<BoardEvent, { kind: 'submitted' }> | undefined;
    if (approval.token != null && froze?.token !== approval.token) problems.push(`${c.taskId} was approved under token ${approval.token}, but the done that froze its work was under ${froze?.token}`);
    const landed = mine.find((e) => e.seq > c.seq && e.kind === 'approved');
    if (!landed) problems.push(`the merge ${m.slice(0, 10)} of ${c.taskId} reached ${base}, but the task was never approved`);
    const late = mine.find((e) => e.seq > c.seq && (!landed || e.seq < landed.seq) && takesBack(e) && e.kind !== 'claim-ended');
    if (late) problems.push(`${c.taskId} was taken back (${late.kind}, #${late.seq}) after the board agreed to land it (#${c.seq})`);
  }
}

/** Every task branch this host has is at the board's record once the agents are gone: a commit the board
 *  refused (however its pane ended) was moved aside, never left on the branch. */
export function strayProblems(host: ThreadHost, folder: string, problems: string[]): void {
  for (const t of host.board.state.tasks.values()) {
    const wt = t.worktree;
    if (!wt || !t.record || t.state === 'done') continue;
    let head = '';
    try {
      head = gitSync(folder, ['rev-parse', '--verify', '--quiet', `refs/heads/${wt.branch}`]);
    } catch {
      continue; // no branch: nothing left on it
    }
    if (head && head !== t.record.sha) problems.push(`${t.id}'s branch ${wt.branch} is at ${head.slice(0, 10)}, not at its record ${t.record.sha.slice(0, 10)}: a commit the board refused was left on it`);
  }
}
