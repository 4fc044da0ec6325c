import type { ClaimEndReason, Task, ThreadSettings } from './model.js';
import { budgetLevel } from '../usage/budgets.js';
import type { SpendFigures } from '../usage/usage.js';

/**
 * Dispatch to idle agents (issue 34, item 2): the rules the board decides with, the window draws with and
 * `why` explains with, in one place. Which agents take tasks when idle (a setting per agent, over the
 * Thread's default), which tasks an agent may take (a task may name the profiles and labels that may take
 * it), and how long an agent that gave a task up waits before the board gives it the same task again.
 */

export const DispatchConstants = {
  /** The first back-off after an agent gave a task up: long enough that an agent that released a task it
   *  could not do is not handed it again on its very next idle prompt (a turn ends within seconds), short
   *  enough that a one-off lapse costs the task well under a lease (120 s by default). */
  firstBackoffMs: 30_000,
  /** Each further try from the same agent doubles the wait: an agent that keeps failing one task drifts to
   *  other work, while the poison limit (failures, any agent) still sends the task to needs-attention. */
  backoffFactor: 2,
  /** The longest back-off: 16 min (30 s × 2⁵). Past that an agent is as likely to have changed (a person
   *  fixed its setup) as not, and the task should not be kept from it for good. */
  maxBackoffMs: 16 * 60_000,
  /** Labels an agent carries, and entries a task's filter names: a handful in practice, and both are read
   *  on every dispatch of every agent. */
  maxLabels: 20,
  /** A label's length: a word, like `frontend` or `gpu`. */
  maxLabelChars: 40,
  /** Agents with a setting of their own on one board. An entry goes when the agent follows the Thread again;
   *  agent ids are per launch, so a long-lived Thread sees many, and the settings travel in every snapshot. */
  maxAgentSettings: 500,
} as const;

/** An agent's own setting: on, off, or (`thread`) whatever the Thread's default is. */
export const DISPATCH_MODES = ['on', 'off', 'thread'] as const;
export type DispatchMode = (typeof DISPATCH_MODES)[number];

export interface AgentDispatch {
  readonly mode: DispatchMode;
  /** What the agent is good for (`frontend`, `gpu`): a task naming `label:frontend` may go to it. */
  readonly labels: readonly string[];
}

/** A task's back-off for one agent: how many times that agent gave it up, and board time (mono ms) until
 *  which the board does not give it to that agent again. */
export interface TaskBackoff {
  readonly tries: number;
  readonly until: number;
}

/** The actor of a grant the board made to an idle agent, as recorded in events (`grant.by`). */
export const DISPATCH_ACTOR = 'dispatch';

/** Who may take a task: every agent (no entries), or one whose profile is named (`claude`) or that carries a
 *  named label (`label:frontend`). */
export const ANY_TAKER: readonly string[] = [];
export const NO_BACKOFF: Readonly<Record<string, TaskBackoff>> = Object.freeze({});
export const NO_AGENT_DISPATCH: Readonly<Record<string, AgentDispatch>> = Object.freeze({});
export const LABEL_PREFIX = 'label:';

export const takersOf = (t: Task): readonly string[] => t.for ?? ANY_TAKER;

/** Claim ends after which the same agent waits before the board gives it the task again: it gave the task
 *  up, ran out of time on it, or a person took it away. Not `completed` (the work is over) nor the ends of a
 *  gone agent or host (the agent is not there to be given anything). */
const BACKOFF_REASONS: ReadonlySet<ClaimEndReason> = new Set<ClaimEndReason>(['released', 'lapsed', 'waited-too-long', 'user-released', 'reassigned', 'no-worktree']);
export const backsOff = (reason: ClaimEndReason): boolean => BACKOFF_REASONS.has(reason);

/** The back-off after an agent's `tries`-th give-up of one task (1 → 30 s, 2 → 60 s, … capped). */
export function backoffMs(tries: number): number {
  const { firstBackoffMs, backoffFactor, maxBackoffMs } = DispatchConstants;
  return Math.min(maxBackoffMs, firstBackoffMs * backoffFactor ** Math.max(0, tries - 1));
}

/** The task's back-off map after `agentId` gave it up at board time `at`. */
export function withBackoff(t: Task, agentId: string, at: number): Readonly<Record<string, TaskBackoff>> {
  const tries = (t.backoff?.[agentId]?.tries ?? 0) + 1;
  return { ...(t.backoff ?? NO_BACKOFF), [agentId]: { tries, until: at + backoffMs(tries) } };
}

/** How long (ms) the board still keeps `t` from `agentId`, 0 when it does not. */
export function backoffLeft(t: Task, agentId: string, now: number): number {
  const b = t.backoff?.[agentId];
  return b && b.until > now ? b.until - now : 0;
}

const AGENT_PROFILE = /^([a-z][a-z0-9]{0,31})-\d{1,9}-[0-9a-f]{12}$/;
/** The profile an agent id names (`claude` for `claude-2-…`, agentIds.ts), or null for another id. */
export function profileOfAgent(agentId: string): string | null {
  return AGENT_PROFILE.exec(agentId)?.[1] ?? null;
}

/** Profiles whose pane is a plain shell or a person's own command line: nothing in it reads a task it is
 *  given. The board's dispatch to one is only printed in its terminal (its notices are shown, never typed),
 *  and waits there for a person or a script: turning it on says so (issue 44). */
const PLAIN_SHELL_PROFILES: ReadonlySet<string> = new Set(['shell', 'custom']);
export const picksWorkItself = (profile: string): boolean => !PLAIN_SHELL_PROFILES.has(profile);

/** The one line the window says when dispatch is turned on for plain shells, named as shown ("shell 1"). */
export function plainShellDispatchWords(names: readonly string[]): string {
  const who =
    names.length === 1
      ? `${names[0]} is a plain shell: it does not pick work by itself.`
      : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} are plain shells: they do not pick work by themselves.`;
  return `${who} A task the board gives ${names.length === 1 ? 'it' : 'one'} is only shown in its terminal, for you to act on.`;
}

/** What a tab's dispatch mark says, to a screen reader and in its tooltip. */
export const DISPATCH_MARK_WORDS = 'the board gives it the next ready task when it is idle';

export function agentDispatchOf(settings: ThreadSettings, agentId: string): AgentDispatch | undefined {
  const all = settings.agentDispatch ?? NO_AGENT_DISPATCH;
  return Object.hasOwn(all, agentId) ? all[agentId] : undefined;
}

/** Whether the board gives `agentId` the next ready task when it is idle: its own setting, else the Thread's. */
export function dispatchOn(settings: ThreadSettings, agentId: string): boolean {
  const mode = agentDispatchOf(settings, agentId)?.mode ?? 'thread';
  return mode === 'thread' ? settings.dispatch === true : mode === 'on';
}

export function labelsOf(settings: ThreadSettings, agentId: string): readonly string[] {
  return agentDispatchOf(settings, agentId)?.labels ?? ANY_TAKER;
}

/** Whether `agentId` (with `labels`) may take `t`: the task names no one, or names its profile or a label of it. */
export function mayTake(t: Task, agentId: string, labels: readonly string[]): boolean {
  return takerTest(agentId, labels)(t);
}

/**
 * `mayTake` for one agent over many tasks: its profile and labels read once, as the names a task may list.
 * Dispatch walks every ready task an agent may not take before the one it may (10k at worst), so the test per
 * task is one set lookup per name the task lists.
 */
export function takerTest(agentId: string, labels: readonly string[]): (t: Task) => boolean {
  const names = new Set(labels.map((l) => `${LABEL_PREFIX}${l}`));
  const profile = profileOfAgent(agentId);
  if (profile !== null) names.add(profile);
  return (t) => {
    const takers = t.for;
    if (takers === undefined || takers.length === 0) return true;
    for (const who of takers) if (names.has(who)) return true;
    return false;
  };
}

/** "claude, label:frontend", or "any agent". */
export const takersText = (takers: readonly string[]): string => (takers.length ? takers.join(', ') : 'any agent');

/** Who may take a task as a person or agent types it: `claude, label:frontend` (commas or spaces; case kept
 *  for labels, profiles lower-cased); '' or `any` for anyone. Checked by whoever reads the list (the schema). */
export function parseTakersText(s: string): string[] {
  const trimmed = s.trim();
  if (trimmed === '' || trimmed.toLowerCase() === 'any') return [];
  return trimmed
    .split(/[\s,]+/)
    .filter((w) => w !== '')
    .map((w) => (w.toLowerCase().startsWith(LABEL_PREFIX) ? `${LABEL_PREFIX}${w.slice(LABEL_PREFIX.length)}` : w.toLowerCase()));
}

/** Labels as typed (`frontend, gpu`): '' or `none` for none. */
export function parseLabelsText(s: string): string[] {
  const trimmed = s.trim();
  if (trimmed === '' || trimmed.toLowerCase() === 'none') return [];
  return trimmed.split(/[\s,]+/).filter((w) => w !== '');
}

/** Issue 47: a task whose own budget is spent is dispatched no more, until a person raises it (budgets.ts). */
export const taskBudgetSpent = (t: Task): boolean => budgetLevel(t.cost, t.budget) === 'stop';

/** Issue 47: with the Thread's budget spent, the board dispatches nothing, until a person raises it. */
export const threadBudgetSpent = (settings: ThreadSettings, thread: SpendFigures): boolean => budgetLevel(thread, settings.budget) === 'stop';
