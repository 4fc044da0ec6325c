import { z } from 'zod';
import type { BoardEvent } from '../board/events.js';
import type { SerializedBoard } from '../board/serialized.js';
import { AgentIdSchema, BodySchema, GoalSchema, NoteTextSchema, ReasonSchema, SettingsPatchSchema, TaskIdSchema, VerifySchema } from '../board/schemas.js';

/**
 * The window's API, defined once. Electron's preload exposes it through contextBridge and `serve` carries it
 * over a WebSocket; the renderer cannot tell which. Every request is validated against these schemas by
 * the host before anything runs.
 */

export const PROFILE_IDS = ['claude', 'codex', 'gemini', 'aider', 'opencode', 'shell', 'custom'] as const;
export type ProfileIdShared = (typeof PROFILE_IDS)[number];

const key = z.string().regex(/^[0-9a-f]{16}$/, 'a thread key is 16 hex digits');
const taskId = TaskIdSchema;
const agentId = AgentIdSchema;
/** Terminal sizes a screen can show; the bounds keep a bad message from allocating a huge buffer. */
const cols = z.number().int().min(2).max(1000);
const rows = z.number().int().min(2).max(500);

export const windowMethods = {
  'threads.list': z.object({}).strict(),
  'threads.open': z.object({ folder: z.string().min(1).max(4096) }).strict(),
  'thread.snapshot': z.object({ key }).strict(),
  'board.setGoal': z.object({ key, goal: GoalSchema }).strict(),
  'board.setSettings': z.object({ key, patch: SettingsPatchSchema }).strict(),
  'task.add': z.object({ key, title: z.string().max(1024 * 1024), body: BodySchema.optional(), verify: VerifySchema.optional() }).strict(),
  'task.edit': z.object({ key, taskId, title: z.string().max(1024 * 1024).optional(), body: BodySchema.optional(), verify: VerifySchema.optional() }).strict(),
  'task.note': z.object({ key, taskId, text: NoteTextSchema }).strict(),
  'task.assign': z.object({ key, taskId, agentId }).strict(),
  'task.release': z.object({ key, taskId }).strict(),
  'task.approve': z.object({ key, taskId }).strict(),
  'task.reject': z.object({ key, taskId, reason: ReasonSchema }).strict(),
  'task.block': z.object({ key, taskId, reason: ReasonSchema }).strict(),
  'task.unblock': z.object({ key, taskId }).strict(),
  'task.reset': z.object({ key, taskId }).strict(),
  'agent.launch': z.object({ key, profile: z.enum(PROFILE_IDS), command: z.string().min(1).max(4096).optional(), cols, rows }).strict(),
  'agent.close': z.object({ key, agentId }).strict(),
  'agent.relaunch': z.object({ key, agentId }).strict(),
  'agent.input': z.object({ key, agentId, data: z.string().max(1024 * 1024) }).strict(),
  'agent.resize': z.object({ key, agentId, cols, rows }).strict(),
  'agent.ack': z.object({ key, agentId, chars: z.number().int().min(0).max(1e9) }).strict(),
  'agent.screen': z.object({ key, agentId }).strict(),
  'agent.detach': z.object({ key, agentId }).strict(),
} as const;

export type WindowMethod = keyof typeof windowMethods;
export type WindowParams<M extends WindowMethod> = z.infer<(typeof windowMethods)[M]>;

export interface AgentInfo {
  id: string;
  name: string;
  profile: string;
  status: 'starting' | 'running' | 'stalled' | 'exited';
  pid: number | null;
  exit: { code: number; signal: number | null } | null;
  /** Task ids it holds a live claim on. */
  claims: string[];
}

export interface ThreadSummary {
  key: string;
  folder: string;
  goal: string;
  open: boolean;
}

/** Everything a window needs to draw a Thread from scratch; events then keep it current. */
export interface ThreadSnapshot {
  key: string;
  folder: string;
  board: SerializedBoard;
  /** The host's board clock when the snapshot was taken: deadlines are in this clock. */
  boardNow: number;
  agents: AgentInfo[];
  /** The latest events, oldest first, for the event-log panel. */
  log: BoardEvent[];
  profiles: Array<{ id: ProfileIdShared; label: string; available: boolean }>;
}

export interface WindowResults {
  'threads.list': ThreadSummary[];
  'threads.open': ThreadSummary;
  'thread.snapshot': ThreadSnapshot;
  'agent.launch': AgentInfo;
  'agent.relaunch': AgentInfo;
  'agent.screen': string;
}
export type WindowResult<M extends WindowMethod> = M extends keyof WindowResults ? WindowResults[M] : null;

/** What the host pushes to windows. `now` is the host's board clock at sending, for countdowns. */
export type WindowPush =
  | { type: 'board-event'; key: string; event: BoardEvent }
  | { type: 'pane-data'; key: string; agentId: string; data: string }
  | { type: 'agents'; key: string; agents: AgentInfo[] }
  /** `about` names what the notice concerns (`lapse:T-3`, `exit:<agent name>`), so a window that noticed the
   *  same thing from the events can show it once. */
  | { type: 'notify'; title: string; body: string; about: string };

/** A refused window request: the board's rejection code, or a transport-level one. */
export interface WindowError {
  code: string;
  message: string;
}

/** The one interface the renderer programs against, whatever carries it. */
export interface WindowApi {
  call<M extends WindowMethod>(method: M, params: WindowParams<M>): Promise<WindowResult<M>>;
  subscribe(listener: (push: WindowPush) => void): () => void;
}

/** Messages on the WebSocket (serve mode). Electron IPC carries the same request/response shapes. */
export type WsClientMessage = { id: number; method: WindowMethod; params: unknown };
export type WsServerMessage =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: WindowError }
  | { push: WindowPush };
