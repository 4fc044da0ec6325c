import type { Result } from '../../src-shared/board/result.js';
import { firstIssue } from '../../src-shared/board/schemas.js';
import { AGENT_METHOD_NAMES, type AgentMethod } from '../../src-shared/protocol/agentMethods.js';
import { agentParamSchemas } from '../../src-shared/protocol/agentSchemas.js';
import { RpcCode, type RpcError } from '../../src-shared/protocol/jsonrpc.js';
import { boardView, taskView } from '../../src-shared/protocol/views.js';
import type { BoardService } from '../board/boardService.js';
import type { LeaseEngine } from '../board/leaseEngine.js';
import type { IssuedWorktree } from '../git/worktreeManager.js';

export type CallOutcome = { ok: true; result: unknown } | { ok: false; error: RpcError };

/** Hooks the rest of the host hangs on agent calls: the verify runner. */
export interface AgentCallHooks {
  onDone?(agentId: string, taskId: string): void;
  /** After a grant: the claim's worktree, once it exists (null where the Thread has no isolation). A
   *  rejection means the claim could not start and has been ended; the agent gets its reason. */
  afterGrant?(taskId: string, token: number): Promise<IssuedWorktree | null>;
}

const isMethod = (m: string): m is AgentMethod => (AGENT_METHOD_NAMES as readonly string[]).includes(m);

/**
 * One agent call, whatever carried it (socket, CLI, MCP): validate params against the shared schema, run
 * it on the board as that agent, and answer a value or a typed refusal. The caller has already proven who
 * the agent is; nothing in `params` can name another agent.
 */
export async function callAsAgent(board: BoardService, agentId: string, method: string, params: unknown, hooks: AgentCallHooks = {}): Promise<CallOutcome> {
  if (!isMethod(method)) return { ok: false, error: { code: RpcCode.methodNotFound, message: `unknown method '${method.slice(0, 64)}'` } };
  const parsed = agentParamSchemas[method].safeParse(params ?? {});
  if (!parsed.success) return { ok: false, error: { code: RpcCode.invalidParams, message: firstIssue(parsed.error) } };
  const p = parsed.data as { taskId?: string; token?: number; text?: string; note?: string; title?: string; body?: string };
  const now = () => board.clock.now();
  const answer = async <T>(op: (e: LeaseEngine) => Result<T>, shape: (v: T) => unknown = (v) => v): Promise<CallOutcome> => {
    const r = await board.run(op);
    if (!r.ok) return { ok: false, error: { code: RpcCode.rejected, message: r.error.message, data: { reason: r.error.code } } };
    return { ok: true, result: shape(r.value) };
  };
  const id = p.taskId as string;
  switch (method) {
    case 'board':
      return { ok: true, result: boardView(board.state, now()) };
    case 'show': {
      const t = board.state.tasks.get(id);
      if (!t) return { ok: false, error: { code: RpcCode.rejected, message: `no task ${id}`, data: { reason: 'no-such-task' } } };
      return { ok: true, result: taskView(t, now()) };
    }
    case 'claim': {
      const out = await answer((e) => e.claim(agentId, p.taskId), (v) => ({ ...v, title: board.state.tasks.get(v.taskId)?.title }));
      if (!out.ok || !hooks.afterGrant) return out;
      const granted = out.result as { taskId: string; token: number };
      try {
        const wt = await hooks.afterGrant(granted.taskId, granted.token);
        return { ok: true, result: { ...granted, worktree: wt } };
      } catch (err) {
        return { ok: false, error: { code: RpcCode.rejected, message: `${granted.taskId} could not start: ${(err as Error).message}`, data: { reason: 'bad-state' } } };
      }
    }
    case 'fence':
      return answer((e) => e.fence(agentId, id, p.token));
    case 'renew':
      return answer((e) => e.renew(agentId, id, p.token));
    case 'note':
      return answer((e) => e.note(agentId, id, p.text, p.token));
    case 'done': {
      const out = await answer((e) => e.done(agentId, id, p.token, p.note));
      if (out.ok) hooks.onDone?.(agentId, id);
      return out;
    }
    case 'release':
      return answer((e) => e.release(agentId, id, p.token));
    case 'add':
      return answer((e) => e.addTask({ title: p.title, body: p.body }, agentId), (t) => taskView(t, now()));
    case 'edit':
      return answer((e) => e.edit(agentId, id, { title: p.title, body: p.body }, p.token));
  }
}
