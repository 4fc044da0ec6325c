import type { Task } from './model.js';
import { afterOf, waitingOn } from './dependencies.js';
import { isInState } from './stateWords.js';
import type { AgentState } from '../agents/agentLife.js';
import type { ThreadSettings } from './model.js';
import { backoffLeft, dispatchOn, labelsOf, mayTake, takersOf, takersText } from './dispatch.js';

/** What dispatch's reasons need besides the tasks: the board's time and settings, and the agents there are
 *  with their states (the host's own; a window's list). Without it, `why` says nothing about dispatch. */
export interface WhyContext {
  /** Board time (mono ms), for back-offs. */
  readonly now: number;
  readonly settings: ThreadSettings;
  readonly agents: ReadonlyArray<{ readonly id: string; readonly name?: string; readonly state: AgentState | null }>;
}
import { landingOrder, landingWaitsOn } from './mergeQueue.js';
import { budgetStop, type ThreadSpend } from './budgetGate.js';

/**
 * "Why isn't it running?" (issue 34, item 3): each reason no one holds a task (or, for a held one, who does),
 * as a code a script can act on and a sentence a person reads. One function over the board's state, so the
 * CLI, MCP and the window's details panel say the same. A list, because reasons add up (a task can wait on
 * two others), and because later reasons (dispatch, back-off, the merge queue) are new codes in it.
 */
export const WHY_CODES = [
  'waiting-on', // it waits on a task that is not done (one reason per such task)
  'needs-attention', // claims of it failed until the poison limit: a person resets it
  'blocked', // a person (or the host) blocked it, with a reason
  'held', // an agent holds it: it is running
  'in-review', // its work waits for a person to approve or reject it
  'done', // it is done: nothing more will run
  'ready', // nothing stops it: the next `claim` with no id (or any agent naming it) takes it
  // Dispatch (issue 34, item 2): why the board has not given a ready task to an idle agent.
  'dispatch-off', // no agent takes tasks when idle: someone has to claim it
  'no-idle-match', // agents take tasks when idle, but none that is idle now may take it (its profiles, labels)
  'backing-off', // an agent gave it up: the board does not give it to that agent again for a while
  'queued', // approved, it waits in the merge queue (its place, what lands before it), or is landing now
  // Budgets (issue 47): the task's own budget, or the Thread's, is spent and not raised (budgetGate.ts).
  'over-budget', // no agent may claim it and the board dispatches it to none, until a person raises the budget or assigns it
] as const;
export type WhyCode = (typeof WHY_CODES)[number];

export interface WhyReason {
  readonly code: WhyCode;
  readonly text: string;
  /** The tasks the reason is about (the one waited on), for a window to link to. */
  readonly taskIds?: readonly string[];
}

export interface WhyView {
  readonly taskId: string;
  readonly title: string;
  readonly state: Task['state'];
  /** Every task it waits on, done or not. */
  readonly after: readonly string[];
  readonly reasons: readonly WhyReason[];
}

/** Why `t` is where it is: never empty (a task nothing stops says `ready`). With `spend` (the Thread's budget
 *  and what it spent) a spent Thread budget is a reason too; the task's own budget is always looked at. */
export function whyNotRunning(tasks: ReadonlyMap<string, Task>, t: Task, ctx?: WhyContext, spend?: ThreadSpend): WhyView {
  const reasons: WhyReason[] = [];
  switch (t.state) {
    case 'claimed':
      reasons.push({ code: 'held', text: `${t.id} is held by ${t.claim?.agentId ?? 'an agent'}: it is running` });
      break;
    case 'review':
      if (t.queued) reasons.push(queuedReason(tasks, t));
      else reasons.push({ code: 'in-review', text: `${t.id} is in review: its work waits for a person to approve or reject it` });
      break;
    case 'done':
      reasons.push({ code: 'done', text: `${t.id} is done` });
      break;
    case 'blocked':
      reasons.push({ code: 'blocked', text: `${t.id} is blocked${t.blockedReason ? `: ${t.blockedReason}` : ''}; a person unblocks it` });
      break;
    case 'needs-attention': {
      const last = t.lastClaim ? ` (the last, ${t.lastClaim.agentId}'s, ended: ${t.lastClaim.reason})` : '';
      const n = t.failures;
      reasons.push({ code: 'needs-attention', text: `${t.id} is in needs-attention after ${n} failed claim${n === 1 ? '' : 's'}${last}; a person resets it` });
      break;
    }
    case 'open':
      break;
  }
  // Said of a held task too: its holder was told to stop, and once it lets go no agent takes it back.
  const stop = t.state === 'done' ? null : budgetStop(t, spend);
  if (stop) reasons.push({ code: 'over-budget', text: stop });
  // A held or reviewed task can wait too (a dependency added after its claim): said after who holds it.
  if (t.state !== 'done') {
    for (const id of waitingOn(tasks, t)) {
      const d = tasks.get(id);
      const where = d ? isInState(d.state) : 'is not on the board';
      const holder = d?.claim ? ` (held by ${d.claim.agentId})` : '';
      reasons.push({ code: 'waiting-on', text: `${t.id} waits on ${id}, which ${where}${holder}`, taskIds: [id] });
    }
  }
  if (reasons.length === 0) {
    reasons.push({ code: 'ready', text: `${t.id} is ready: nothing stops it, and the next agent to claim takes it` });
    if (ctx) reasons.push(...dispatchReasons(tasks, t, ctx));
  }
  return { taskId: t.id, title: t.title, state: t.state, after: afterOf(t), reasons };
}

/** Why the board has not dispatched a ready task: no agent takes tasks when idle, none idle may take it, or
 *  the ones that may are backing off from it (each with how long is left). */
function dispatchReasons(tasks: ReadonlyMap<string, Task>, t: Task, ctx: WhyContext): WhyReason[] {
  const out: WhyReason[] = [];
  const name = (a: WhyContext['agents'][number]) => a.name ?? a.id;
  const dispatching = ctx.agents.filter((a) => a.state !== 'exited' && dispatchOn(ctx.settings, a.id));
  const takers = takersOf(t);
  for (const a of ctx.agents) {
    const left = backoffLeft(t, a.id, ctx.now);
    if (left === 0) continue;
    const tries = t.backoff?.[a.id]?.tries ?? 1;
    out.push({ code: 'backing-off', text: `${t.id} is backing off from ${name(a)} for ${Math.ceil(left / 1000)} s (it gave it up ${tries} time${tries === 1 ? '' : 's'})` });
  }
  const anyOn = ctx.settings.dispatch === true || Object.values(ctx.settings.agentDispatch ?? {}).some((d) => d.mode === 'on');
  if (dispatching.length === 0 && !anyOn) {
    out.push({ code: 'dispatch-off', text: `dispatch is off: no agent takes the next ready task when idle, so ${t.id} waits for someone to claim it` });
    return out;
  }
  const holding = new Set<string>();
  for (const o of tasks.values()) if (o.claim) holding.add(o.claim.agentId);
  const idleFits = dispatching.filter((a) => a.state === 'idle' && !holding.has(a.id) && mayTake(t, a.id, labelsOf(ctx.settings, a.id)) && backoffLeft(t, a.id, ctx.now) === 0);
  if (idleFits.length === 0) {
    const others = dispatching.map((a) => `${name(a)} (${holding.has(a.id) ? 'holds a task' : (a.state ?? 'state unknown')}${labelsOf(ctx.settings, a.id).length ? `; labels ${labelsOf(ctx.settings, a.id).join(', ')}` : ''})`).join(', ');
    const who = others ? `the agents that take tasks when idle are ${others}` : 'no agent that takes tasks when idle is running';
    out.push({ code: 'no-idle-match', text: `no idle agent matches (${takersText(takers)}): ${who}` });
  }
  return out;
}

/** "T-7 is approved and waits in the merge queue, position 2 of 3, behind T-3": its place in landing order. */
function queuedReason(tasks: ReadonlyMap<string, Task>, t: Task): WhyReason {
  if (t.queued?.landing) {
    const onto = t.queued.landing.onto.slice(0, 8);
    return { code: 'queued', text: `${t.id} is approved and landing now: merged onto ${onto}, its verify command runs on the result before the base moves` };
  }
  const order = landingOrder(tasks).map((q) => q.id);
  const i = order.indexOf(t.id);
  const ahead = order.slice(0, i);
  const behind = ahead.length ? `, behind ${ahead.join(', ')}` : ', next to land';
  const held = landingWaitsOn(tasks, t).filter((id) => !tasks.get(id)?.queued);
  const hold = held.length ? `; it lands only once ${held.join(', ')} ${held.length === 1 ? 'is' : 'are'} done` : '';
  return { code: 'queued', text: `${t.id} is approved and waits in the merge queue, position ${i + 1} of ${order.length}${behind}${hold}`, taskIds: ahead };
}
