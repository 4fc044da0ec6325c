import { STATE_WORDS } from '../agents/agentLife.js';
import type { SendBackCause, TaskState } from '../board/model.js';
import { showControls } from '../text/controlChars.js';

/**
 * The notices a person gets: an agent waiting for them or done with its turn, a claim that lapsed, a board
 * that turned read-only, an agent that exited. The host is their one source: it builds each here, keeps the
 * current ones (a window opened later is given them with its snapshot) and pushes them to the windows of its
 * Thread. No window builds a notice of its own; the windows raise one OS notification per notice among them
 * all (the first to claim its `id` from the host raises it).
 */
export interface Notice {
  /** This notice, once: what it concerns and when it arose. A second wait of the same agent is a new id. */
  id: string;
  /** What the notice concerns (`lapse:T-3`, `waiting:<agent id>`): a newer notice about it replaces the older. */
  about: string;
  title: string;
  body: string;
  /** The agent it concerns, when one: a click on its OS notification shows that agent's tab. */
  agentId?: string;
}

/** The id of the notice about `about` that arose at `at` (the host's board clock, ms). */
const idOf = (about: string, at: number): string => `${about}@${at}`;

/** Where a lapsed task went, in a person's words. */
function whereItWent(to: TaskState): string {
  if (to === 'needs-attention') return 'its attempts are used up, so it waits in Needs attention for a person';
  if (to === 'open') return 'the task is back in the backlog';
  return `the task is in ${to}`;
}

export function lapseNotice(taskId: string, holder: string, title: string, to: TaskState, at = 0): Notice {
  const about = `lapse:${taskId}`;
  return { id: idOf(about, at), about, title: `Claim lapsed: ${taskId}`, body: `${holder}'s lease on "${title}" ran out; ${whereItWent(to)}.` };
}

export function readOnlyNotice(threadKey: string, folderName: string, reason: string, at = 0): Notice {
  const about = `read-only:${threadKey}`;
  return { id: idOf(about, at), about, title: `Board read-only: ${folderName}`, body: reason };
}

/**
 * An event read from the board's store did not apply and was set aside (storedEvents.ts): the person is told
 * once which one (its position and kind) and why, since nobody but someone with the store's key (its folder, or
 * the database's role) can have written it.
 */
export function quarantineNotice(threadKey: string, folderName: string, q: { seq: number; kind: string | null; why: string; store: 'journal' | 'database' }, at = 0): Notice {
  const about = `quarantine:${threadKey}:${q.store}:${q.seq}`;
  const where = q.store === 'journal' ? "in this board's journal" : "in the shared board's database";
  return {
    id: idOf(about, at),
    about,
    title: `Board event set aside: ${folderName}`,
    body: showControls(`Event #${q.seq}${q.kind ? ` (${q.kind})` : ''} ${where} was not applied: ${q.why}. The board went on without it. No host of Forkbench writes such an event: someone with access to the board's ${q.store === 'journal' ? 'folder' : 'database role'} did.`, 'none'),
  };
}

/** A queue entry that was not the person's act (no valid seal: approvalSeal.ts) was taken out unmerged. */
export function unsealedApprovalNotice(taskId: string, title: string, at = 0): Notice {
  const about = `unsealed:${taskId}`;
  return {
    id: idOf(about, at),
    about,
    title: `Approval not made here: ${taskId}`,
    body: `An approval of ${taskId} "${title}" was in the merge queue without this host's seal: it was written into the board's store, not made in your window, so nothing of it was merged. ${taskId} stays in review. Whoever can write the board's store (its folder, or the database's role) wrote it.`,
  };
}

/** A shared board's host was paused or cut off past its own lease: its agents' claims were ended. */
export function hostLapsedNotice(threadKey: string, folderName: string, ended: number, at = 0): Notice {
  const about = `host-lapsed:${threadKey}`;
  const what = ended === 0 ? 'any claims its agents held were ended (host-lost)' : ended === 1 ? "its agent's claim was ended (host-lost)" : `its agents' ${ended} claims were ended (host-lost)`;
  return {
    id: idOf(about, at),
    about,
    title: `This host lost its lease: ${folderName}`,
    body: `This host stopped renewing its lease on the shared board for too long (it was paused, asleep or cut off), so ${what}; their writes since were refused. It has joined the board again: agents can claim tasks anew.`,
  };
}

/**
 * Another host of the shared board is gone (issue 45): it left (stopped, its lease closed) or was lost (it stopped
 * renewing its lease, and its agents' claims were ended). Its name is another machine's word: shown, never acted
 * on. One notice per host and going, said once: the board's event it comes from is followed once per host.
 */
export function hostGoneNotice(threadKey: string, gone: { host: { id: string; name: string }; how: 'left' | 'lost'; agents: number; claims: number }, at = 0): Notice {
  const about = `host-gone:${threadKey}:${gone.host.id}`;
  const name = showControls(gone.host.name, 'none');
  const one = gone.agents === 1;
  // Its agents may have stopped with it, or run on in its pty host (serve --keep-agents) holding no claim:
  // either way they are not listed here, and no claim of theirs is vouched for.
  const agents = gone.agents === 0 ? 'it ran no agent' : `${one ? 'its agent is' : `its ${gone.agents} agents are`} no longer listed here`;
  if (gone.how === 'left') {
    const claims = gone.claims === 0 ? '' : gone.claims === 1 ? ', and 1 claim was ended' : `, and ${gone.claims} claims were ended`;
    return { id: idOf(about, at), about, title: `Host ${name} left the board`, body: `${name} stopped and left the shared board: ${agents}${claims}.` };
  }
  const claims = gone.claims === 0 ? 'no claim was held' : gone.claims === 1 ? '1 claim was ended (host-lost): its task is free to claim' : `${gone.claims} claims were ended (host-lost): their tasks are free to claim`;
  return { id: idOf(about, at), about, title: `Host ${name} was lost`, body: `${name} stopped renewing its lease on the shared board (it crashed, was paused or cut off): ${agents}, and ${claims}.` };
}

/** An approval's merge landed on the remote's base, which the person's own branch here does not have: their
 *  clone is told, not changed behind their back. */
export function baseMovedNotice(threadKey: string, moved: { taskId: string; title: string; remote: string; base: string; sha: string }, at = 0): Notice {
  const about = `base:${threadKey}:${moved.base}`;
  const sha = moved.sha.slice(0, 7);
  return {
    id: idOf(about, at),
    about,
    title: `${moved.base} on ${moved.remote} is now ${sha}`,
    body: `${moved.base} on ${moved.remote} is now ${sha} (${moved.taskId} "${showControls(moved.title, 'none')}" merged): git pull to get it. Your ${moved.base} here was not moved.`,
  };
}

/**
 * Agents run outside a sandbox (issue 43): the machine cannot contain them (with the one command that fixes
 * it), or a person turned it off for some profiles (with what undoes it). One notice per Thread, its lines the
 * host's plain words; a change of them replaces it, and it goes once every agent launched is contained again.
 */
export function sandboxNotice(threadKey: string, lines: readonly string[], at = 0): Notice {
  const about = `sandbox:${threadKey}`;
  return { id: idOf(about, at), about, title: 'Agents are not contained', body: lines.join('\n') };
}

export function agentExitedNotice(name: string, exit: { code: number; signal: number | null } | null, at = 0, agentId?: string): Notice {
  const how = exit?.signal ? `was killed by signal ${exit.signal}` : `exited with code ${exit?.code}`;
  const about = `exit:${name}`;
  return { id: idOf(about, at), about, title: `Agent exited: ${name}`, body: `${name} ${how}.`, ...(agentId ? { agentId } : {}) };
}

/** What a person is told about an agent's turn: it started waiting for them, or it finished. */
export type TurnNoticeKind = 'waiting' | 'done';

/** The words: the agent, its task, and the question when it is known (controls shown as text). */
export function turnNotice(
  kind: TurnNoticeKind,
  agent: { id: string; name: string; text: string | null },
  task: { id: string; title: string } | null,
  at = 0,
): Notice {
  const about = `${kind}:${agent.id}`;
  const title = kind === 'waiting' ? `${agent.name} is ${STATE_WORDS['needs-input']}` : `${agent.name} finished its turn`;
  const on = task ? `${task.id} "${showControls(task.title, 'none')}"` : 'no task claimed';
  const question = kind === 'waiting' && agent.text ? `\n${showControls(agent.text, 'tab-newline')}` : '';
  return { id: idOf(about, at), about, title, body: `${on}${question}`, agentId: agent.id };
}

/** The first lines of a send-back's reason a notice shows: the files of a conflict, a verify's last words. */
const NOTICE_REASON_CHARS = 400;

/**
 * The merge queue sent approved work back (issue 44): its merge conflicts with the base, or failed its verify.
 * Its own outcome, never a lapse: the person is told which, on what, and to whom the task went back.
 */
export function sentBackNotice(taskId: string, title: string, cause: SendBackCause, reason: string, holder: string | null, at = 0, agentId?: string): Notice {
  const about = `sent-back:${taskId}`;
  const what = cause === 'conflict' ? `Merge conflict: ${taskId}` : `Verify failed on the merge: ${taskId}`;
  const plain = showControls(reason.replace(/^Merge queue: /, ''), 'tab-newline');
  const cut = plain.length > NOTICE_REASON_CHARS ? `${plain.slice(0, NOTICE_REASON_CHARS - 1)}…` : plain;
  const to = holder ? `back to ${holder} with a full lease` : 'back to the backlog (its agent is gone)';
  return { id: idOf(about, at), about, title: what, body: `"${showControls(title, 'none')}" did not land and went ${to}. ${cut}`, ...(agentId ? { agentId } : {}) };
}

/**
 * A budget (issue 47) reached its notice share (80 %) or was spent: the person is told once per crossing, and a
 * spent one replaces the earlier notice about the same budget. `task` null: the Thread's budget. `spent` is the
 * budget's own words (budgets.ts budgetText).
 */
export function budgetNotice(threadKey: string, task: { id: string; title: string } | null, level: 'notice' | 'stop', spent: string, at = 0): Notice {
  const about = task ? `budget:${task.id}` : `budget:thread:${threadKey}`;
  const of = task ? `${task.id} "${showControls(task.title, 'none')}"` : 'This Thread';
  if (level === 'notice') return { id: idOf(about, at), about, title: `Budget 80% spent: ${task ? task.id : 'the Thread'}`, body: `${of} has spent ${spent} of its budget.` };
  const then = task
    ? `The board will not give ${task.id} to an agent again, and its agent was told to stop.`
    : "The board will not give any task to an agent, and the agents holding tasks were told to stop.";
  return { id: idOf(about, at), about, title: `Budget spent: ${task ? task.id : 'the Thread'}`, body: `${of} has spent its budget: ${spent}. ${then} Raise the budget to go on, or stop the agent.` };
}
