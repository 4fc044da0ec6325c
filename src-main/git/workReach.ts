import type { BranchRecord, GitRemote, Task } from '../../src-shared/board/model.js';
import { shortSha } from '../../src-shared/git/taskBranch.js';
import type { WorkElsewhere } from '../../src-shared/protocol/windowApi.js';
import { GitError } from './git.js';
import { firstLine, TaskRemote } from './taskRemote.js';
import type { TaskRepo } from './taskRepo.js';

/** The work in review as this host has it: its recorded commit, here with the recorded tree (null: a board
 *  from before records, whose work is the branch), or where it is instead. */
export type Reached = { ok: true; sha: string | null } | { ok: false; elsewhere: WorkElsewhere };

/** What the board knows of where a commit was made, for whereWorkIs. */
export interface WorkFacts {
  taskId: string;
  /** The remote's ref for the task's branch (TaskRepo.remoteRefOf): where its host pushes the work. */
  ref: string;
  why: WorkElsewhere['why'];
  sha: string;
  /** The host that recorded it; `here` when it is this host (the clone lost it since). */
  host: string | null;
  here: boolean;
  agent: string;
  /** Its agent runs on a live host of the board now (that host pushes what it records while it runs). */
  agentLive: boolean;
  remote: GitRemote | null;
  /** What the remote holds under the task's ref when that is not the recorded commit. */
  other?: string | null;
  /** Why the remote could not be reached, in git's words (no command line, no password). */
  cause?: string;
}

/**
 * A task's work where this host can show it (issue 45): the commit the board recorded, in this clone (made
 * here, fetched before, or fetched now from the Thread's remote, `refs/forkbench/tasks/T-n`, where the host
 * that recorded it pushes it). When it cannot be had, where it is instead: the host and agent that made it,
 * why it is not here, and what the person can do. Review shows only work this host has, and approval
 * approves only that: a person never approves a commit they could not be shown.
 */
export class WorkReach {
  constructor(private readonly r: TaskRepo) {}

  async reach(t: Task): Promise<Reached> {
    const rec = t.submitted ?? t.record;
    if (!rec) return { ok: true, sha: null };
    let now = await this.here(rec);
    if (now === 'yes') return { ok: true, sha: rec.sha };
    const remote = this.r.board.state.settings.remote;
    if (now === 'other') return this.elsewhere(t, rec, { why: 'not-arrived', remote });
    if (!remote) return this.elsewhere(t, rec, { why: 'no-remote', remote });
    const link = new TaskRemote(this.r, remote);
    const ref = this.r.remoteRefOf(t.id);
    const failed = await link.fetch([ref]).then(
      () => null,
      (err: Error) => err,
    );
    now = await this.here(rec);
    if (now === 'yes') return { ok: true, sha: rec.sha };
    if (now === 'other') return this.elsewhere(t, rec, { why: 'not-arrived', remote });
    // A remote that gave no answer within the time bound is not asked again: the person would wait twice.
    if (failed instanceof GitError && failed.code === null) return this.elsewhere(t, rec, { why: 'unreachable', remote, cause: gitWords(failed.message) });
    // Not here after the fetch: what the remote holds there says whether it answered, and what it has.
    const listed = await link.list([ref]).then(
      (refs) => refs.get(ref) ?? null,
      (err: Error) => err,
    );
    if (listed instanceof Error) return this.elsewhere(t, rec, { why: 'unreachable', remote, cause: gitWords((failed ?? listed).message) });
    if (listed === null) return this.elsewhere(t, rec, { why: 'not-pushed', remote });
    return this.elsewhere(t, rec, { why: 'not-arrived', remote, other: listed });
  }

  /** The recorded commit is here with its recorded tree (`yes`), here with another (`other`), or not here. */
  private async here(rec: BranchRecord): Promise<'yes' | 'other' | 'no'> {
    const tree = await this.r.treeOf(rec.sha);
    return !tree ? 'no' : tree === rec.tree ? 'yes' : 'other';
  }

  /** Where the board says the commit was made: the host its record names, and its agent by name. */
  private async elsewhere(t: Task, rec: BranchRecord, o: Pick<WorkFacts, 'why' | 'remote' | 'other' | 'cause'>): Promise<Reached> {
    let host: { id: string; name: string } | null = null;
    for (const e of await this.r.board.taskLog(t.id).catch(() => [])) if (e.kind === 'branch-recorded' && e.record.sha === rec.sha && e.host) host = e.host;
    const peer = (this.r.board.membership?.peers() ?? []).find((p) => p.id === rec.by);
    // A board of one host names no host on its records: what it recorded, this host recorded.
    const me = this.r.board.engine.here;
    const here = host ? host.id === me?.id : me === null;
    const facts: WorkFacts = { taskId: t.id, ref: this.r.remoteRefOf(t.id), sha: rec.sha, host: host?.name ?? peer?.host ?? null, here, agent: peer?.name ?? rec.by, agentLive: !!peer, ...o };
    return { ok: false, elsewhere: { why: o.why, sha: rec.sha, host: facts.host, agent: facts.agent, message: whereWorkIs(facts) } };
  }
}

/** git's own words of a failure, without the command line the host ran. */
function gitWords(message: string): string {
  return firstLine(message).replace(/^git \S+ failed \([^)]*\): /, '').trim();
}

/** What a person reads when this host cannot show a task's work: where it is, why not here, what to do. */
export function whereWorkIs(f: WorkFacts): string {
  const short = shortSha(f.sha);
  const ref = f.ref;
  // Where it was made, as a subject ("buildbox has not pushed it"), and whose window can show it (none: this one).
  const maker = f.here ? 'this host' : (f.host ?? 'the host it was made on');
  const window = f.here ? null : f.host ? `${f.host}'s window` : 'the window of the host it was made on';
  const orThere = window ? `, or review it in ${window}` : '';
  const lead = `${f.taskId}'s work, commit ${short} by ${f.agent} ${f.here ? 'on this host' : f.host ? `on ${f.host}` : 'on another host'}, is not in this clone`;
  let text: string;
  if (f.why === 'no-remote' || !f.remote)
    text = window
      ? `${lead}, and this Thread names no remote to fetch it from: it is only in ${f.host ? `${f.host}'s clone` : 'the clone of the host it was made on'}. Review it in ${window}, or give every host's clone one shared remote (Thread settings) so work travels between them.`
      : `${lead} any more, and this Thread names no remote to fetch it from, so nothing here can show it. Reject it, so its agent commits the work again.`;
  else if (f.why === 'not-pushed')
    text = `${lead}, and ${f.remote.name} does not have it under ${ref}: ${maker} has not pushed it yet, or it was lost with that host. ${f.agentLive ? `Forkbench on ${maker} runs ${f.agent} now and pushes each commit as it is recorded: press Refresh in a moment` : `Forkbench on ${maker} pushes it while it runs: start it there again if it stopped, then press Refresh`}${orThere}.`;
  else if (f.why === 'unreachable')
    text = `${lead}, and ${f.remote.name} (${f.remote.url}) could not be reached from this host to fetch it${f.cause ? ` (${f.cause})` : ''}. Check this host's access to it, then press Refresh${orThere}.`;
  else
    text = `${lead}: what arrived${f.other ? ` from ${f.remote.name} under ${ref} is ${shortSha(f.other)}` : ' here has other content'}, not the recorded ${short}, so there is nothing here to show. Something other than Forkbench wrote there; from a clone on ${maker}, \`git push ${f.remote.name} ${f.sha}:${ref}\` puts the work back, then press Refresh${orThere}.`;
  return `${text} Approval stays off until this host can show it.`;
}
