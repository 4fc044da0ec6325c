import { USER, type BranchRecord } from '../../src-shared/board/model.js';
import type { Result } from '../../src-shared/board/result.js';
import { firstIssue } from '../../src-shared/board/schemas.js';
import { AGENT_METHOD_NAMES, type AgentMethod, type AgentResults, type ClaimResult, type ClaimWorktree, type RecordView } from '../../src-shared/protocol/agentMethods.js';
import { agentParamSchemas } from '../../src-shared/protocol/agentSchemas.js';
import { RpcCode, type RpcError } from '../../src-shared/protocol/jsonrpc.js';
import { boardView, taskView } from '../../src-shared/protocol/views.js';
import type { BoardService } from '../board/boardService.js';
import type { LeaseEngine } from '../board/leaseEngine.js';

export type CallOutcome<T = unknown> = { ok: true; result: T } | { ok: false; error: RpcError };

/** Hooks the rest of the host hangs on agent calls: the verify runner, the worktree of a new claim. */
export interface AgentCallHooks {
  onDone?(agentId: string, taskId: string): void;
  /** After a grant: the claim's worktree, once it exists (null where the Thread has no isolation). A
   *  rejection means the claim could not start and has been ended; the agent gets its reason. */
  afterGrant?(taskId: string, token: number): Promise<ClaimWorktree | null>;
  /** A hook reports a landed move of a task branch: the branch's actual head and the commit's tree, read
   *  from git itself (a report is a claim; the repository is the fact). Rejects when the branch is not at `to`. */
  readMove?(taskId: string, ref: string, to: string): Promise<{ tree: string }>;
  /** A move the board refused to record, or a branch found off its record: put the branch back. */
  offRecord?(taskId: string): void;
}

const isMethod = (m: string): m is AgentMethod => (AGENT_METHOD_NAMES as readonly string[]).includes(m);

/** Params as the shared schemas validated them (each method takes a subset). */
interface Params {
  taskId?: string;
  token?: number;
  text?: string;
  note?: string;
  title?: string;
  body?: string;
  ref?: string;
  from?: string;
  to?: string;
}

interface Call {
  board: BoardService;
  agentId: string;
  p: Params;
  /** The task id, for methods whose schema requires one. */
  id: string;
  hooks: AgentCallHooks;
  now(): number;
}

const refused = (message: string, reason: string): { ok: false; error: RpcError } => ({ ok: false, error: { code: RpcCode.rejected, message, data: { reason } } });

/** Run one decision on the board and answer its value (shaped) or its typed refusal. */
async function answer<T, R = T>(c: Call, op: (e: LeaseEngine) => Result<T>, shape?: (v: T) => R): Promise<CallOutcome<R>> {
  const r = await c.board.run(op);
  if (!r.ok) return refused(r.error.message, r.error.code);
  return { ok: true, result: shape ? shape(r.value) : (r.value as unknown as R) };
}

/** One handler per method, typed by the method's result in the shared table. */
const handlers: { [M in AgentMethod]: (c: Call) => Promise<CallOutcome<AgentResults[M]>> | CallOutcome<AgentResults[M]> } = {
  board: (c) => ({ ok: true, result: boardView(c.board.state, c.now()) }),
  show: (c) => {
    const t = c.board.state.tasks.get(c.id);
    return t ? { ok: true, result: taskView(t, c.now()) } : refused(`no task ${c.id}`, 'no-such-task');
  },
  claim: async (c) => {
    const out = await answer(c, (e) => e.claim(c.agentId, c.p.taskId), (v): ClaimResult => ({ ...v, title: c.board.state.tasks.get(v.taskId)?.title }));
    if (!out.ok || !c.hooks.afterGrant) return out;
    const granted = out.result;
    try {
      return { ok: true, result: { ...granted, worktree: await c.hooks.afterGrant(granted.taskId, granted.token) } };
    } catch (err) {
      return refused(`${granted.taskId} could not start: ${(err as Error).message}`, 'bad-state');
    }
  },
  fence: async (c) => {
    const update = c.p.ref !== undefined && c.p.from !== undefined ? { ref: c.p.ref, from: c.p.from } : undefined;
    const out = await answer(c, (e) => e.fence(c.agentId, c.id, c.p.token, update));
    if (!out.ok && update && reasonOf(out.error) === 'off-record') c.hooks.offRecord?.(c.id);
    return out;
  },
  record: (c) => record(c, (e, tree) => e.recordBranch(c.agentId, c.id, c.p.token, { ref: c.p.ref as string, from: c.p.from as string, to: c.p.to as string, tree })),
  renew: (c) => answer(c, (e) => e.renew(c.agentId, c.id, c.p.token)),
  note: (c) => answer(c, (e) => e.note(c.agentId, c.id, c.p.text, c.p.token)),
  done: async (c) => {
    const out = await answer(c, (e) => e.done(c.agentId, c.id, c.p.token, c.p.note));
    if (out.ok) c.hooks.onDone?.(c.agentId, c.id);
    return out;
  },
  release: (c) => answer(c, (e) => e.release(c.agentId, c.id, c.p.token)),
  add: (c) => answer(c, (e) => e.addTask({ title: c.p.title, body: c.p.body }, c.agentId), (t) => taskView(t, c.now())),
  edit: (c) => answer(c, (e) => e.edit(c.agentId, c.id, { title: c.p.title, body: c.p.body }, c.p.token)),
};

const reasonOf = (e: RpcError): string | undefined => (e.data as { reason?: string } | undefined)?.reason;

/** A landed branch move, recorded if the board takes it; whatever it refuses is put back off the branch. */
async function record(c: Call, op: (e: LeaseEngine, tree: string) => Result<BranchRecord>): Promise<CallOutcome<RecordView>> {
  let tree: string;
  try {
    if (!c.hooks.readMove) return refused(`${c.id} has no worktree to record`, 'bad-state');
    tree = (await c.hooks.readMove(c.id, c.p.ref as string, c.p.to as string)).tree;
  } catch (err) {
    c.hooks.offRecord?.(c.id);
    return refused((err as Error).message, 'off-record');
  }
  const out = await answer(c, (e) => op(e, tree), (r): RecordView => ({ taskId: c.id, sha: r.sha, token: r.token }));
  if (!out.ok) c.hooks.offRecord?.(c.id);
  return out;
}

/**
 * A person's report of a commit by hand in a task's folder. The caller has already been found to run in no
 * agent's pane; only `record` is open to a person, and it records under the claim the folder was made for.
 */
export async function callAsPerson(board: BoardService, method: string, params: unknown, hooks: AgentCallHooks = {}): Promise<CallOutcome> {
  if (method !== 'record') return { ok: false, error: { code: RpcCode.unauthorized, message: 'unknown or expired agent secret' } };
  const parsed = agentParamSchemas.record.safeParse(params ?? {});
  if (!parsed.success) return { ok: false, error: { code: RpcCode.invalidParams, message: firstIssue(parsed.error) } };
  const p = parsed.data as Params;
  const c: Call = { board, agentId: USER, p, id: p.taskId as string, hooks, now: () => board.clock.now() };
  return record(c, (e, tree) => e.recordByPerson(c.id, { ref: p.ref as string, from: p.from as string, to: p.to as string, tree }));
}

/**
 * One agent call, whatever carried it (socket, CLI, MCP): validate params against the shared schema, run
 * it on the board as that agent, and answer a value or a typed refusal. The caller has already proven who
 * the agent is; nothing in `params` can name another agent.
 */
export async function callAsAgent(board: BoardService, agentId: string, method: string, params: unknown, hooks: AgentCallHooks = {}): Promise<CallOutcome> {
  if (!isMethod(method)) return { ok: false, error: { code: RpcCode.methodNotFound, message: `unknown method '${method.slice(0, 64)}'` } };
  const parsed = agentParamSchemas[method].safeParse(params ?? {});
  if (!parsed.success) return { ok: false, error: { code: RpcCode.invalidParams, message: firstIssue(parsed.error) } };
  const p = parsed.data as Params;
  return handlers[method]({ board, agentId, p, id: p.taskId as string, hooks, now: () => board.clock.now() });
}
