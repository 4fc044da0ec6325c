import type { AgentLife, AgentState, AgentStateInfo } from '../agents/agentLife.js';
import type { TaskState } from './model.js';

/**
 * A task's state as the end of a sentence that starts with its id: "T-2 is in review", "T-2 is done".
 * Messages say where a task is the way a person would ("is in review", not "is review"), in one place, so
 * every refusal that names a state reads the same. The column names stay the states' own words.
 */
const PHRASES: Record<TaskState, string> = {
  open: 'is open',
  claimed: 'is claimed',
  review: 'is in review',
  done: 'is done',
  blocked: 'is blocked',
  'needs-attention': 'is in needs-attention',
};

/** "is in review"; with `already`, "is already in review". */
export function isInState(state: TaskState, o: { already?: boolean } = {}): string {
  const phrase = PHRASES[state];
  return o.already ? phrase.replace(/^is /, 'is already ') : phrase;
}

/**
 * Who owes whom, for one agent: the one state a person can act on, in the same words on its tab, in the agent
 * list, on its task's card, in the assign menu and in their accessible names. Built from what the host knows
 * of the agent (its process and its signals' state) and what the board knows of its tasks: an agent at its
 * prompt holding a claim is not done ("idle holding T-2": its lease runs), and one whose work waits for the
 * person's review is not stalled (the person owes it a verdict).
 */
export const STANDINGS = ['starting', 'working', 'waiting-for-you', 'waiting-for-review', 'idle-holding', 'idle', 'stalled', 'exited', 'unknown'] as const;
export type StandingKind = (typeof STANDINGS)[number];

/** The standings where the person is the one owed: the header counts them and Alt+Shift+N goes to them. */
export const OWED_BY_PERSON: ReadonlySet<StandingKind> = new Set(['waiting-for-you', 'waiting-for-review']);

export interface StandingFacts {
  /** Its life (AgentInfo.status). */
  readonly status: AgentLife;
  /** Its activity: what its signals said, if anything has (AgentStateInfo.state). */
  readonly state: AgentState | null;
  /** Only the launch and the liveness check have spoken (AgentStateInfo.presumed): its "working" is a guess. */
  readonly presumed?: boolean;
  /** The tasks it holds a claim on that it works on (claimed), in the order the host listed them. */
  readonly holding: readonly string[];
  /** Its tasks waiting for the person's review. */
  readonly inReview: readonly string[];
}

export interface Standing {
  readonly kind: StandingKind;
  /** The words a person reads: "idle holding T-2", "waiting for your review of T-3". */
  readonly words: string;
  /** Beside the words, so a standing is never told by colour alone. */
  readonly icon: string;
}

/** An icon per standing; each one DejaVu Sans draws (the fonts the window falls back to). */
const ICONS: Record<StandingKind, string> = {
  starting: '…',
  working: '⚙',
  'waiting-for-you': '✋',
  'waiting-for-review': '⚑',
  'idle-holding': '◷',
  idle: '✓',
  stalled: '‖',
  exited: '■',
  unknown: '?',
};

const ids = (list: readonly string[]) => list.join(', ');

function standing(kind: StandingKind, words: string): Standing {
  return { kind, words, icon: ICONS[kind] };
}

/**
 * The rules, first match wins: gone is gone; a question to the person comes before everything; after a
 * restart nothing is claimed until the pane is seen; work waiting for review is the person's turn unless the
 * agent is said to be busy with something else (a launch's presumed "working" says nothing); a process starting is starting; no progress while holding is stalled
 * (without a claim it is only idle); at a prompt with a claim its lease runs ("idle holding").
 */
export function standingOf(f: StandingFacts): Standing {
  if (f.status === 'exited' || f.state === 'exited') return standing('exited', 'exited');
  if (f.state === 'needs-input') return standing('waiting-for-you', 'waiting for you');
  if (f.state === 'unknown') return standing('unknown', 'unknown');
  if (f.inReview.length > 0 && (f.state !== 'working' || f.presumed)) return standing('waiting-for-review', `waiting for your review of ${ids(f.inReview)}`);
  if (f.status === 'starting') return standing('starting', 'starting');
  if (f.status === 'stalled' || f.state === 'stalled') {
    return f.holding.length > 0 ? standing('stalled', `stalled holding ${ids(f.holding)}`) : standing('idle', 'idle');
  }
  if (f.state === 'working') return standing('working', 'working');
  if (f.state === 'idle') return f.holding.length > 0 ? standing('idle-holding', `idle holding ${ids(f.holding)}`) : standing('idle', 'idle');
  // Nothing said yet (another host's agent before its first state): not a guess of "working".
  return standing('unknown', 'unknown');
}

/** An agent as its host lists it (AgentInfo): its life and activity, from the one agent that owns both, and
 *  the tasks it holds a claim on. */
export interface ListedAgent {
  readonly status: AgentLife;
  readonly state?: AgentStateInfo | null;
  readonly claims: readonly string[];
}

/**
 * A listed agent's standing, its claims split by the board into the work it holds and the work waiting for
 * the person's review: a window hands over the agent as the host sent it and its board, and merges nothing.
 */
export function standingOfAgent(a: ListedAgent, taskState: (taskId: string) => TaskState | undefined): Standing {
  const holding: string[] = [];
  const inReview: string[] = [];
  for (const id of a.claims) {
    const t = taskState(id);
    if (t === 'review') inReview.push(id);
    else if (t === 'claimed') holding.push(id);
  }
  return standingOf({ status: a.status, state: a.state?.state ?? null, presumed: a.state?.presumed === true, holding, inReview });
}
