import type { CarryEventBody, BoardEventBody } from './events.js';
import { HOST_ACTOR, type Task } from './model.js';
import { compareTaskIds, taskNumber, type Board } from './reducer.js';
import { afterOf } from './dependencies.js';
import { takersOf } from './dispatch.js';
import { stateAfterClaimEnd } from './claimEnd.js';

/**
 * A Thread's local board carried onto a shared one (issue 45): what the copy writes, planned against the shared
 * board as it is when the copy is decided (under its lock), so two hosts copying at once, or a copy retried after
 * it was cut off, can never carry a task twice.
 *
 * - Every task, with its body, notes (their authors and times), dependencies, takers, state, failures and
 *   recorded commits. A claim ends `board-moved` (its agents ended with the move): a claimed task is open again,
 *   work in review stays in review with its branch (which approval merges). A queue entry is not carried: its
 *   approval was sealed for the old board, so the task waits in review for an approval here, and a note says so.
 * - Ids: kept when the shared board has no tasks; else the next free ones, in the old order. Each carried task
 *   keeps where it came from (`copiedFrom`): that is the map of old to new ids, on the board for every host.
 * - Once: a task an earlier copy of the same old board carried is not carried again (its new id is answered),
 *   so a second move, or a retry of one whose answer was lost, merges nothing twice.
 * - The goal and settings go only onto a board that has no tasks yet; a board in use keeps its own, and the old
 *   board's verify command goes onto each carried task that has none of its own, so nothing is left unchecked.
 */

/** The old board: its tasks, goal and settings, and how it is known (`board`: its host and thread ids). */
export interface CarrySource {
  readonly board: Readonly<Board>;
  /** Unique among the boards that could be carried: `hostId:threadId` (a thread id alone is its folder's path
   *  hash, the same on two hosts with the same path). */
  readonly id: string;
  /** For people: "the local board of /home/me/app on buildbox". */
  readonly label: string;
}

/** What a copy did: each old id with its id here, those carried now and those an earlier copy carried. */
export interface CarryOutcome {
  readonly label: string;
  readonly copied: ReadonlyArray<readonly [string, string]>;
  readonly already: ReadonlyArray<readonly [string, string]>;
  /** Whether the goal and settings were carried (a board with no tasks yet). */
  readonly settings: boolean;
}

export interface CarryPlan {
  readonly events: Array<BoardEventBody | CarryEventBody>;
  /** What the board's text grows by (the cap is checked before anything is written). */
  readonly growth: number;
  readonly outcome: CarryOutcome;
}

/** The note on a task that was waiting in the old board's merge queue: its approval does not travel. */
export const QUEUE_NOT_CARRIED =
  'This task was approved and waiting in the merge queue of the board it was carried from. An approval is sealed for its board, so it was not carried: approve it again here to land it.';

export function planCarry(src: CarrySource, target: Readonly<Board>, by: string): CarryPlan {
  const map = new Map<string, string>();
  const already: Array<[string, string]> = [];
  for (const t of target.tasks.values()) {
    if (t.copiedFrom?.board !== src.id) continue;
    map.set(t.copiedFrom.taskId, t.id);
    already.push([t.copiedFrom.taskId, t.id]);
  }
  already.sort((a, b) => compareTaskIds(a[0], b[0]));
  const fresh = target.tasks.size === 0;
  const todo = carryOrder(src.board.tasks, map);
  // A board with no tasks keeps the old ids (a person's T-12 stays T-12); a board in use numbers them on.
  let next = target.nextTaskNumber;
  const copied: Array<[string, string]> = [];
  for (const t of [...todo].sort((a, b) => compareTaskIds(a.id, b.id))) {
    const id = fresh ? t.id : `T-${next++}`;
    map.set(t.id, id);
    copied.push([t.id, id]);
  }
  const events: Array<BoardEventBody | CarryEventBody> = [];
  let growth = 0;
  const s = src.board;
  if (fresh) {
    if (s.goal && s.goal !== target.goal) {
      events.push({ kind: 'goal-set', goal: s.goal, by });
      growth += s.goal.length - target.goal.length;
    }
    // The shared board's own remote (its clones' shared one) and agents (theirs, not the old board's) stay.
    events.push({ kind: 'settings-set', settings: { ...s.settings, remote: target.settings.remote, agentDispatch: target.settings.agentDispatch }, by });
  }
  const threadVerify = !fresh && s.settings.verify !== null && s.settings.verify !== target.settings.verify ? s.settings.verify : null;
  for (const t of todo) {
    const id = map.get(t.id) as string;
    const state = t.state === 'claimed' ? (stateAfterClaimEnd(t, 'board-moved', s.settings.poisonLimit) as Exclude<Task['state'], 'claimed'>) : t.state;
    const verify = t.verify ?? threadVerify;
    const after = afterOf(t).map((d) => map.get(d) ?? d);
    const takers = takersOf(t);
    events.push({
      kind: 'task-copied',
      taskId: id,
      from: { board: src.id, taskId: t.id },
      title: t.title,
      body: t.body,
      verify,
      state,
      ...(after.length ? { after } : {}),
      ...(takers.length ? { for: [...takers] } : {}),
      blockedReason: t.blockedReason,
      sentBack: t.sentBack ?? null,
      attempts: t.attempts,
      failures: t.failures,
      lastClaim: t.claim ? { agentId: t.claim.agentId, token: t.claim.token, reason: 'board-moved' } : t.lastClaim,
      record: t.record,
      submitted: t.submitted,
      // Only work in review keeps its branch: approval merges it. Any other folder was the old board's.
      worktree: state === 'review' ? t.worktree : null,
      createdAt: t.createdAt,
      by,
    });
    growth += t.title.length + t.body.length + (verify?.length ?? 0);
    for (const n of t.notes) {
      events.push({ kind: 'note', taskId: id, by: n.by, text: n.text, wrote: n.at });
      growth += n.text.length;
    }
    if (t.queued) {
      events.push({ kind: 'note', taskId: id, by: HOST_ACTOR, text: QUEUE_NOT_CARRIED });
      growth += QUEUE_NOT_CARRIED.length;
    }
  }
  events.push({ kind: 'board-copied', from: { board: src.id, label: src.label }, copied: copied.length, already: already.length, runs: runsOf(copied), by });
  return { events, growth, outcome: { label: src.label, copied, already, settings: fresh } };
}

/**
 * The tasks still to carry, each after every task it waits on (the engine refuses cycles, so there is such an
 * order): a task arrives with what it waits on already there, as its readiness is first judged.
 */
function carryOrder(tasks: ReadonlyMap<string, Task>, carried: ReadonlyMap<string, string>): Task[] {
  const out: Task[] = [];
  const seen = new Set<string>();
  const visit = (root: Task) => {
    // Iterative: a chain of thousands of dependencies would overflow a recursive walk's stack.
    const stack: Array<{ t: Task; i: number }> = [{ t: root, i: 0 }];
    seen.add(root.id);
    while (stack.length) {
      const top = stack[stack.length - 1] as { t: Task; i: number };
      const deps = afterOf(top.t);
      if (top.i < deps.length) {
        const d = tasks.get(deps[top.i++] as string);
        if (d && !seen.has(d.id) && !carried.has(d.id)) {
          seen.add(d.id);
          stack.push({ t: d, i: 0 });
        }
        continue;
      }
      stack.pop();
      out.push(top.t);
    }
  };
  for (const t of [...tasks.values()].sort((a, b) => compareTaskIds(a.id, b.id))) if (!seen.has(t.id) && !carried.has(t.id)) visit(t);
  return out;
}

/** Old → new ids as runs of consecutive numbers: [first old, first new, how many]. */
export function runsOf(pairs: ReadonlyArray<readonly [string, string]>): Array<[number, number, number]> {
  const runs: Array<[number, number, number]> = [];
  for (const [from, to] of pairs) {
    const a = taskNumber(from);
    const b = taskNumber(to);
    const last = runs[runs.length - 1];
    if (last && last[0] + last[2] === a && last[1] + last[2] === b) last[2]++;
    else runs.push([a, b, 1]);
  }
  return runs;
}

/** Old → new ids from their runs: `T-1…T-200 → T-14…T-213`; a task that kept its id: `T-5 → T-5`. */
export function runsText(runs: ReadonlyArray<readonly [number, number, number]>): string {
  const span = (first: number, n: number) => (n === 1 ? `T-${first}` : `T-${first}…T-${first + n - 1}`);
  return runs.map(([from, to, n]) => `${span(from, n)} → ${span(to, n)}`).join(', ');
}

/** A copy's outcome in one line, for a host's log and a window: how many came, under which ids, how many were
 *  there already. */
export function carryText(o: CarryOutcome): string {
  const n = (k: number) => `${k} task${k === 1 ? '' : 's'}`;
  const moved = o.copied.length ? `copied ${n(o.copied.length)} of ${o.label} (${runsText(runsOf(o.copied))})` : `copied no task of ${o.label}`;
  return `${moved}${o.already.length ? `; ${n(o.already.length)} were copied before and were not copied again` : ''}${o.settings ? '; its goal and settings came too' : ''}`;
}
