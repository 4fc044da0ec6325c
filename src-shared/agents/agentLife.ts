/**
 * An agent's state, in one vocabulary: its life (starting, running, stalled, exited: what the host knows of
 * its process) and, while it runs, its activity (working, waiting for the person, idle, stalled: what its
 * signals say). One `Agent` on the host owns both (src-main/agents/agent.ts) and the window shows both as they
 * come in the agent list (AgentInfo.status and AgentInfo.state): a person reads them as one standing
 * (board/stateWords.ts), worked out in one place from this and the board.
 */

/** Where an agent is in its life: launched and not yet running, running, running without progress while it
 *  holds work (or stopped), or gone. A resume takes a gone agent back to starting: the same agent, a new process. */
export const AGENT_LIVES = ['starting', 'running', 'stalled', 'exited'] as const;
export type AgentLife = (typeof AGENT_LIVES)[number];

/**
 * What the liveness check found of a running agent, as one word the agent takes in whole: making progress
 * (`renew`), none while it holds work or is stopped (`stalled`), none while it holds nothing (`idle`), or held
 * up by a person it waits on (`held`: its activity already says so). Its life and its activity both follow
 * from this one word, so no caller can move one and forget the other.
 */
export type LivenessWord = 'renew' | 'stalled' | 'idle' | 'held';

/**
 * Its activity: what an agent is doing, as a person needs to know it: working, waiting for them, done with its turn,
 * stuck, or gone. Each state comes from one of the signals an agent's CLI gives, and the signal is kept with
 * it, because a state read off the screen deserves less trust than one the CLI's own hook reported.
 */

export const AGENT_STATES = ['working', 'needs-input', 'idle', 'stalled', 'exited', 'unknown'] as const;
export type AgentState = (typeof AGENT_STATES)[number];

/** The states an agent (its hooks, through `forkbench status`) may report; stalled and exited are the
 *  host's own findings, which no agent can claim or deny, and unknown is what a host that took back a pane
 *  after a restart knows of it until the pane says something (output, a hook, a prompt). */
export const REPORTABLE_STATES = ['working', 'needs-input', 'idle'] as const;
export type ReportableState = (typeof REPORTABLE_STATES)[number];

/**
 * Where a state came from, strongest first: the CLI's own hook knows; a terminal signal (OSC 9/777, BEL, a
 * title) is the program saying something less precise; the screen is a guess from known prompt text; the
 * liveness check only knows whether anything moved.
 */
export const STATE_SOURCES = ['hook', 'terminal', 'screen', 'liveness'] as const;
export type StateSource = (typeof STATE_SOURCES)[number];

/** Lower is stronger. */
export const sourceRank = (s: StateSource): number => STATE_SOURCES.indexOf(s);

export interface AgentStateInfo {
  readonly state: AgentState;
  readonly source: StateSource;
  /** The prompt's text when waiting on one and it is known; controls already shown as escapes. */
  readonly text: string | null;
  /** Wall clock of the change, display only. */
  readonly since: number;
  /** Set while only the launch and the liveness check have spoken: `working` (or `stalled`) is then what
   *  the host assumed of a CLI starting up, not a turn the agent began. The CLI's first "ready" (Gemini's
   *  title) is therefore no finished turn to tell the person about. */
  readonly presumed?: true;
}

/** An agent's state as one owner holds it and the window is told it: its life, and its activity while a pane
 *  of this host reads its signals (null for another host's agent, or one of an earlier run). */
export interface AgentCondition {
  readonly life: AgentLife;
  readonly activity: AgentStateInfo | null;
}

/** Longest prompt text an agent may report (`forkbench status … --text`): a long question with its options.
 *  A CLI's prompt may hold anything, controls included: they are shown as escapes where it is kept. */
export const MAX_PROMPT_CHARS = 4000;

/** Longest prompt text kept: a dialog's question and its options, not a screenful. */
export const MAX_STATE_TEXT_CHARS = 500;

/** The word for each state as a signal said it (the log's agent-state lines, the CLI's board). What a person
 *  reads on a tab, a card or the agent list is the agent's standing (board/stateWords.ts), which adds what
 *  it holds and what waits for the person's review to this. */
export const STATE_WORDS: Record<AgentState, string> = {
  working: 'working',
  'needs-input': 'waiting for you',
  idle: 'idle',
  stalled: 'stalled',
  exited: 'exited',
  unknown: 'unknown',
};

/** An icon beside the word, so the state is not told by colour alone. */
export const STATE_ICONS: Record<AgentState, string> = {
  working: '⚙',
  'needs-input': '✋',
  idle: '✓',
  // U+2016, not U+23F8 (⏸): the pause sign is missing from common fonts (DejaVu draws it as an empty box).
  stalled: '‖',
  exited: '■',
  unknown: '?',
};

/** How a source is named beside a state ("waiting for you, from the screen"). */
export const SOURCE_WORDS: Record<StateSource, string> = {
  hook: 'from its hook',
  terminal: 'from the terminal',
  screen: 'from the screen',
  liveness: 'from liveness',
};
