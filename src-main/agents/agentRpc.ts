import { USER, type BranchRecord, type Task } from '../../src-shared/board/model.js';
import { failed, type Result } from '../../src-shared/board/result.js';
import type { AgentStateInfo, ReportableState } from '../../src-shared/agents/agentLife.js';
import type { AgentMethod, ClaimResult, ClaimWorktree, DoneView, RecordView } from '../../src-shared/protocol/agentMethods.js';
import { agentProcedures, type AgentInput } from '../../src-shared/protocol/agentSchemas.js';
import type { CallFailure } from '../../src-shared/protocol/procedure.js';
import { RpcCode, type RpcError } from '../../src-shared/protocol/jsonrpc.js';
import { boardView, taskView, type AgentStateView } from '../../src-shared/protocol/views.js';
import { whyNotRunning } from '../../src-shared/board/why.js';
import { agentDispatchOf, dispatchOn, labelsOf } from '../../src-shared/board/dispatch.js';
import { queueView } from '../../src-shared/board/mergeQueue.js';
import { callProcedure, Refusal, unwrap, type Handlers } from '../base/procedureServer.js';
import type { BoardService, KeyedOutcome, WriteKey } from '../board/boardService.js';
import { requestHash } from '../board/writeKeys.js';
import { keyedWrite } from '../board/keyedWrite.js';
import type { LeaseEngine } from '../board/leaseEngine.js';
import { profileLeaseViews } from '../../src-shared/board/leaseEvidence.js';
import { PROFILE_IDS } from '../../src-shared/agents/profileIds.js';
import { PROFILES } from './profiles.js';
import { costAnswer } from '../board/costReads.js';
import { sameReadings } from '../board/usageRecorder.js';
import { randomUUID } from 'node:crypto';
import { profileOfAgent } from '../../src-shared/board/leaseEvidence.js';
import { USAGE_SOURCES, type UsageTurn } from '../../src-shared/usage/usage.js';
import { parseLimitsText } from '../../src-shared/usage/limitsText.js';
import type { UsageReportView } from '../../src-shared/protocol/agentMethods.js';

/** A profile's name for people ("Claude Code"); its id for one this Forkbench does not launch. */
const profileLabel = (p: string): string => (Object.hasOwn(PROFILES, p) ? PROFILES[p as keyof typeof PROFILES].label : p);

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
  /** An agent reports its own state (`status`): the state as it now stands, or a Refusal thrown
   *  (rate-limited). Absent where the host tracks no states. */
  reportState?(agentId: string, state: ReportableState, text: string | null): AgentStateInfo;
  /** Every agent's state, for the board's answer. */
  agentStates?(): AgentStateView[];
}

/** Who calls, on which board: what every handler gets beside its validated params. */
interface Caller {
  board: BoardService;
  agentId: string;
  hooks: AgentCallHooks;
}

const now = (c: Caller): number => c.board.clock.now();

/**
 * A write's idempotency key as the board keeps it: this agent's, with the hash of the request it came with
 * (the method and every param but the key, as validated: the schema's key order, so one request hashes one
 * way). Keys are per agent, so no agent can read another's outcome by sending its key.
 */
function keyOf(c: Caller, method: AgentMethod, p: { key?: string }): WriteKey | undefined {
  if (p.key === undefined) return undefined;
  const { key, ...request } = p;
  return { agentId: c.agentId, key, hash: requestHash(method, request) };
}

/**
 * One write's decision, under its key when it has one: the outcome (`answer` of the engine's value: what the
 * agent is told, stored as the key's first outcome), and whether it was replayed from an earlier try, in
 * which case nothing was done now and the caller's own side effects (hooks) must not run again.
 */
async function write<T, A>(c: Caller, method: AgentMethod, p: { key?: string }, op: (e: LeaseEngine) => Result<T>, answer: (v: T) => A): Promise<KeyedOutcome<A>> {
  return keyedWrite(c.board, keyOf(c, method, p), op, answer);
}
const same = <T>(v: T): T => v;

/** One handler per method, typed by the method's entry in the shared procedure table: each gets its own
 *  method's validated input (a required param is there, an optional one may not be). */
const handlers: Handlers<typeof agentProcedures, Caller> = {
  board: (_p, c) => ({ ...boardView(c.board.state, now(c)), agents: c.hooks.agentStates?.() ?? [] }),
  show: (p, c) => {
    const t = c.board.state.tasks.get(p.taskId);
    if (!t) throw new Refusal('no-such-task', `no task ${p.taskId}`);
    return taskView(t, now(c), c.board.state.tasks);
  },
  // Each profile's lease and its evidence (leaseEvidence.ts): a read, for the agent and the person in a shell.
  leases: (_p, c) => profileLeaseViews(c.board.state.settings, c.board.state.evidence, profileLabel, PROFILE_IDS),
  why: (p, c) => {
    const t = c.board.state.tasks.get(p.taskId);
    if (!t) throw new Refusal('no-such-task', `no task ${p.taskId}`);
    const { state } = c.board;
    // A host that keeps no agents' states (a bare socket) cannot say which agent is idle: no dispatch reasons.
    const views = c.hooks.agentStates?.();
    const agents = views?.map((a) => ({ id: a.id, name: a.name, state: a.state }));
    return whyNotRunning(state.tasks, t, agents && { now: now(c), settings: state.settings, agents }, { settings: state.settings, thread: state.costs.thread });
  },
  queue: (_p, c) => queueView(c.board.state.tasks, c.board.state.settings.verify),
  'queue-move': async (p, c) => {
    // An agent moves its own work only (the task it held last): the order of others' is the person's to set.
    const t = c.board.state.tasks.get(p.taskId);
    const own = t?.claim?.agentId ?? t?.lastClaim?.agentId;
    if (t?.queued && own !== c.agentId) throw new Refusal('not-holder', `${p.taskId} is not your work: only the person, or the agent whose work it is, moves it in the merge queue`);
    unwrap((await write(c, 'queue-move', p, (e) => e.moveQueued(p.taskId, p.before ?? null, c.agentId), same)).result);
    return queueView(c.board.state.tasks, c.board.state.settings.verify);
  },
  claim: async (p, c) => {
    const r = await write(c, 'claim', p, (e) => e.claim(c.agentId, p.taskId, p.force === true), (v): ClaimResult => ({ ...v, title: c.board.state.tasks.get(v.taskId)?.title }));
    const granted = unwrap(r.result);
    if (!c.hooks.afterGrant) return granted;
    try {
      return { ...granted, worktree: await c.hooks.afterGrant(granted.taskId, granted.token) };
    } catch (err) {
      // A retry is told of the grant it first got; only the first try's failure is the claim's end.
      if (r.replayed) return granted;
      throw new Refusal('bad-state', `${granted.taskId} could not start: ${(err as Error).message}`);
    }
  },
  fence: async (p, c) => {
    const update = p.ref !== undefined && p.from !== undefined ? { ref: p.ref, from: p.from } : undefined;
    const r = await write(c, 'fence', p, (e) => e.fence(c.agentId, p.taskId, p.token, update), same);
    if (!r.result.ok && !r.replayed && update && r.result.error.code === 'off-record') c.hooks.offRecord?.(p.taskId);
    return unwrap(r.result);
  },
  record: (p, c) => record(p, c, (e, move) => e.recordBranch(c.agentId, p.taskId, p.token, move)),
  renew: async (p, c) => unwrap((await write(c, 'renew', p, (e) => e.renew(c.agentId, p.taskId, p.token), same)).result),
  note: async (p, c) => unwrap((await write(c, 'note', p, (e) => e.note(c.agentId, p.taskId, p.text, p.token), same)).result),
  done: async (p, c) => {
    const r = await write(c, 'done', p, (e) => e.done(c.agentId, p.taskId, p.token, p.note), (v): DoneView => {
      const warning = noWorkWarning(c.board.state.tasks.get(v.taskId), v.token);
      return warning ? { ...v, warning } : v;
    });
    const v = unwrap(r.result);
    if (!r.replayed) c.hooks.onDone?.(c.agentId, p.taskId);
    return v;
  },
  release: async (p, c) => unwrap((await write(c, 'release', p, (e) => e.release(c.agentId, p.taskId, p.token), same)).result),
  add: async (p, c) => unwrap((await write(c, 'add', p, (e) => e.addTask({ title: p.title, body: p.body }, c.agentId, p.after, p.for), (t) => taskView(t, now(c), c.board.state.tasks))).result),
  edit: async (p, c) => unwrap((await write(c, 'edit', p, (e) => e.edit(c.agentId, p.taskId, { title: p.title, body: p.body, after: p.after }, p.token), same)).result),
  dispatch: async (p, c) => {
    const labels = (): readonly string[] => p.labels ?? labelsOf(c.board.state.settings, c.agentId);
    const r = await write(c, 'dispatch', p, (e) => e.setAgentDispatch(c.agentId, p.mode, labels(), c.agentId), () => null);
    unwrap(r.result);
    const { settings } = c.board.state;
    return { agentId: c.agentId, mode: agentDispatchOf(settings, c.agentId)?.mode ?? 'thread', labels: labelsOf(settings, c.agentId), on: dispatchOn(settings, c.agentId) };
  },
  // What agents spent (issue 47): a read, like `queue`, for the agent and the person in a shell.
  cost: async (p, c) => unwrap(await costAnswer(c.board, p.taskId, p.csv === true)),
  status: (p, c) => {
    if (!c.hooks.reportState) throw new Refusal('bad-state', 'this host keeps no agent states');
    return c.hooks.reportState(c.agentId, p.state, p.text ?? null);
  },
  usage: (p, c) => reportUsage(p, c),
  limits: async (p, c) => {
    const parsed = parseLimitsText(p.readings);
    if (!parsed.ok) throw new Refusal('invalid-input', parsed.message);
    const before = c.board.state.costs.agents[c.agentId]?.limits;
    // Claude Code runs its status line several times a second while it streams, each with the same readings:
    // those take nothing from the agent's write quota, which its claims and renewals need.
    if (sameReadings(before, parsed.readings)) return { recorded: false, readings: parsed.readings };
    // As a report, so new readings are held to the agent's write quota: ones that change on every call are bounded.
    unwrap(await c.board.run((e) => e.recordUsage(c.agentId, 'report', [], parsed.readings)));
    // The fold replaces the agent's readings only with an event: the same readings again record none.
    return { recorded: c.board.state.costs.agents[c.agentId]?.limits !== before, readings: parsed.readings };
  },
};

/** The profiles whose CLI's own records the host reads (issue 47): every usage source but a report. */
const READ_PROFILES: ReadonlySet<string> = new Set(USAGE_SOURCES.filter((s) => s !== 'report'));

/**
 * `forkbench usage`: one turn a script or custom agent reports, attributed like any CLI's (LeaseEngine.recordUsage).
 * Refused for an agent whose CLI's own records are read: the same turns would be counted twice.
 */
async function reportUsage(p: AgentInput<'usage'>, c: Caller): Promise<UsageReportView> {
  const profile = profileOfAgent(c.agentId);
  if (profile !== null && READ_PROFILES.has(profile))
    throw new Refusal('bad-state', `${profileLabel(profile)}'s own records of what it spent are read already; a report would count its turns twice. Nothing was recorded.`);
  const turn: UsageTurn = {
    id: p.id ?? `report-${randomUUID()}`,
    // The host's receipt time: a report is made as its turn ends, and a script's clock is no better than the host's.
    cliAt: null,
    model: p.model ?? null,
    tokens: { input: p.input, output: p.output, cacheRead: p['cache-read'] ?? 0, cacheWrite: p['cache-write'] ?? 0, reasoning: p.reasoning ?? 0 },
    usd: p.cost ?? null,
  };
  const r = unwrap(await c.board.run((e) => e.recordUsage(c.agentId, 'report', [turn])));
  const to = r.to[0];
  const tokens = turn.tokens.input + turn.tokens.output + turn.tokens.cacheRead + turn.tokens.cacheWrite;
  return { id: turn.id, recorded: r.recorded === 1, tokens, taskId: to?.taskId ?? null, token: to?.token ?? null, how: to?.how ?? null };
}

/**
 * A task with a worktree whose review holds no commit of this claim: done is still taken (a task may need no
 * change), but the agent hears now, not at approval, that approving it merges nothing of its own.
 */
function noWorkWarning(t: Task | undefined, token: number): string | undefined {
  if (!t?.worktree || (t.submitted && t.submitted.token === token)) return undefined;
  return `no commit is recorded for ${t.id} under token ${token}, so approving it merges nothing of yours; if you meant to commit, commit before saying done (a person can reject it back to you)`;
}

type Move = { ref: string; from: string; to: string; tree: string };

/** A landed branch move, recorded if the board takes it; whatever it refuses is put back off the branch. A
 *  retry of a record already decided gets its first outcome before git is read or the branch touched. */
async function record(p: AgentInput<'record'>, c: Caller, op: (e: LeaseEngine, move: Move) => Result<BranchRecord>): Promise<RecordView> {
  const id = p.taskId;
  const k = c.agentId === USER ? undefined : keyOf(c, 'record', p);
  let tree = '';
  // Git is read only for a record not decided before: a retry gets its first outcome, and the branch is not touched.
  const readTree = async (): Promise<void> => {
    if (!c.hooks.readMove) throw new Refusal('bad-state', `${id} has no worktree to record`);
    try {
      tree = (await c.hooks.readMove(id, p.ref, p.to)).tree;
    } catch (err) {
      c.hooks.offRecord?.(id);
      throw new Refusal('off-record', (err as Error).message);
    }
  };
  const decideOn = (e: LeaseEngine) => op(e, { ref: p.ref, from: p.from, to: p.to, tree });
  const view = (rec: BranchRecord): RecordView => ({ taskId: id, sha: rec.sha, token: rec.token });
  const r = await keyedWrite(c.board, k, decideOn, view, readTree);
  if (!r.result.ok && !r.replayed) c.hooks.offRecord?.(id);
  return unwrap(r.result);
}

/** A person reports a commit by hand: only `record` is open to them, under the claim the folder was made for. */
const personHandlers: Handlers<Pick<typeof agentProcedures, 'record'>, Caller> = {
  record: (p, c) => record(p, c, (e, move) => e.recordByPerson(p.taskId, move)),
};

/** The edge's failure as JSON-RPC: its standard codes for a bad name or params, `rejected` with the reason else. */
function rpcError(f: CallFailure): RpcError {
  if (f.at === 'method') return { code: RpcCode.methodNotFound, message: f.message };
  // Bad params keep JSON-RPC's own code, and say the reason in the board's words as a refusal does, so the
  // CLI prints "refused (invalid-input)" whichever rule caught it.
  if (f.at === 'input') return { code: RpcCode.invalidParams, message: f.message, data: { reason: f.code } };
  return { code: RpcCode.rejected, message: f.message, data: { reason: f.code } };
}

/** An agent call's answer, before the socket frames it as JSON-RPC (whose own key for the value is `result`). */
async function answer(out: Promise<Result<unknown, CallFailure>>): Promise<Result<unknown, RpcError>> {
  const r = await out;
  return r.ok ? r : failed(rpcError(r.error));
}

/**
 * A person's report of a commit by hand in a task's folder. The caller has already been found to run in no
 * agent's pane; only `record` is open to a person, and it records under the claim the folder was made for.
 */
export async function callAsPerson(board: BoardService, method: string, params: unknown, hooks: AgentCallHooks = {}): Promise<Result<unknown, RpcError>> {
  if (method !== 'record') return failed({ code: RpcCode.unauthorized, message: 'unknown or expired agent secret' });
  return answer(callProcedure({ record: agentProcedures.record }, personHandlers, method, params, { board, agentId: USER, hooks }));
}

/**
 * One agent call, whatever carried it (socket, CLI, MCP): validated once against the shared procedure
 * table, run on the board as that agent, answered with a value or a typed refusal. The caller has already
 * proven who the agent is; nothing in `params` can name another agent.
 */
export function callAsAgent(board: BoardService, agentId: string, method: string, params: unknown, hooks: AgentCallHooks = {}): Promise<Result<unknown, RpcError>> {
  return answer(callProcedure(agentProcedures, handlers, method, params, { board, agentId, hooks }));
}
