import type { AgentRecord, AgentRegistry } from '../agents/agentRegistry.js';
import type { LivenessSubject } from '../agents/liveness.js';
import type { ProfileIdShared } from '../../src-shared/protocol/windowApi.js';
import type { BoardService } from '../board/boardService.js';
import type { PaneSession, PtyFactory } from '../pty/paneSession.js';
import { PtySession } from '../pty/ptySession.js';
import type { PaneTypist } from './assignmentTyping.js';
import type { AgentSessions } from './agentSessions.js';
import type { AgentStates } from './agentStates.js';

/** What a pane is and what the panes room is given: the shapes panes.ts works with, apart from its logic. */

export const LockConstants = {
  /** A group killed -9 is gone within milliseconds; its children may take a moment to be reaped. */
  retryMs: 250,
  /** 40 × 250 ms: a background job of the agent that outlives it by ten seconds keeps its locks. */
  tries: 40,
} as const;

export interface Pane extends LivenessSubject {
  record: AgentRecord;
  session: PaneSession;
  launch: { profile: ProfileIdShared; command?: string; cols: number; rows: number; name: string };
  /** Types the host's messages into the pane when it is quiet. */
  typist: PaneTypist;
}

/** Panes in this process: a board host that goes takes its agents with it. */
export const localPtys: PtyFactory = { spawn: async (command, args, options) => PtySession.spawn(command, args, options) };

/** A pane the pty host kept through a board host restart, to be taken back. */
export interface AdoptedPane {
  session: PaneSession;
  agentId: string;
  secretDigest: string;
  profile: string;
  name: string;
  command?: string;
  cols: number;
  rows: number;
}

export interface PanesDeps {
  folder: string;
  /** The Thread's key, which the pty host keeps with each pane so a restarted host finds its own. */
  threadKey?: string;
  /** Where panes run: this process (the default) or the pty host. */
  ptys?: PtyFactory;
  board: BoardService;
  registry: AgentRegistry;
  socketPath: string;
  /** The per-install CLI shim folder, put first on each agent's PATH. */
  binDir: string;
  /** Where each agent's config files (holding its secret) go, one folder per agent. */
  agentFilesDir: string;
  /** The environment agents start from. */
  env: Record<string, string | undefined>;
  /** Folders outside the Thread's folder that agents edit (the worktrees). */
  writableRoots: () => string[];
  /** Clear the git locks a gone agent left; returns what was cleared. */
  clearLocksOf: ((agentId: string) => string[]) | null;
  typingQuietMs?: number;
  warn?: (message: string) => void;
  /** The agents' records and conversations, kept across processes and host restarts. */
  sessions: AgentSessions;
  /** Each pane's agent state (hooks, terminal signals, screen). */
  states?: AgentStates;
}
