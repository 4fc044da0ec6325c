/**
 * The agents' API, defined once. The host's socket validates against the procedures built from this table
 * (agentSchemas.ts: each method's input schema derived from its params, beside its answer's type), the
 * `forkbench` CLI builds its commands and help from it, and `forkbench mcp` turns each entry into an MCP
 * tool. It is plain data on purpose: the CLI must start in about the time of a bare `node`, and loading a
 * schema library would double that; the CLI takes the procedures' types only (`import type`).
 */

import type { ClaimView, WorktreeView } from './views.js';
import type { WhyView } from '../board/why.js';
import type { ProfileLeaseView } from '../board/leaseEvidence.js';
import type { DispatchMode } from '../board/dispatch.js';
import type { QueueView } from '../board/mergeQueue.js';
import type { TaskCostView, ThreadCostView } from '../usage/costView.js';

/** `agentState` is a state an agent may report of itself; `prompt` a prompt's text as its CLI showed it;
 *  `after` the tasks a task waits on (`T-3,T-5`; '' or `none` for none); `flag` a yes given by naming it. */
export type ParamKind = 'taskId' | 'token' | 'note' | 'title' | 'body' | 'ref' | 'sha' | 'agentState' | 'prompt' | 'key' | 'after' | 'flag' | DispatchParamKind | UsageParamKind;
/** Usage (issue 47): `count` a number of tokens, `usd` money in US dollars, `model` a model's name, `turnId` the
 *  id a reported turn is counted once by, `limits` rate-limit readings as text (src-shared/usage/limitsText.ts). */
export type UsageParamKind = 'count' | 'usd' | 'model' | 'turnId' | 'limits';
/** Dispatch (issue 34): `takers` who may take a task (`claude,label:frontend`; '' or `any`: anyone), `labels`
 *  an agent's labels (`frontend,gpu`; '' or `none`), `dispatchMode` on, off or thread. */
export type DispatchParamKind = 'takers' | 'labels' | 'dispatchMode';

/**
 * A write's idempotency key: the board answers a write sent again with the same key with its first outcome
 * instead of doing it twice. Up to 64 characters (a UUID is 36; room for a script's own scheme) of letters,
 * digits and `. _ : -`, so it is safe in a log line and a shell. Stated here, as plain data, because the
 * CLI checks `--key` with it before it loads anything, and the host's schema (agentSchemas.ts) with the same.
 */
export const WRITE_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
export const WRITE_KEY_RULE = '1 to 64 letters, digits or . _ : - (starting with a letter or digit)';
/** A reported turn's id (`forkbench usage --id`): a script's own scheme (its run and step), or the CLI's fresh
 *  `report-<uuid>`; 200 characters is room for any, and the same safe letters as a key. */
export const TURN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;
export const TURN_ID_RULE = '1 to 200 letters, digits or . _ : - (starting with a letter or digit)';

/** One parameter. Generic so the table below keeps each one's name, kind and whether it is required as
 *  literal types: the agents' procedures (agentSchemas.ts) derive each method's input type from them. */
export interface ParamSpec<N extends string = string, K extends ParamKind = ParamKind, R extends boolean = boolean> {
  readonly name: N;
  readonly kind: K;
  readonly required: R;
  /** On the command line: a positional argument (in order), else `--<name> VALUE`. */
  readonly positional: boolean;
  readonly describe: string;
  /** Filled in by the git hooks, not by a person or agent: left out of the synopsis. */
  readonly git?: boolean;
}

/** A method as the table states it; `MethodSpec` is the same with its name known to be one of the table's. */
interface MethodEntry {
  readonly name: string;
  readonly summary: string;
  readonly params: readonly ParamSpec[];
  /** Writes go through the fence and renew the caller's lease; reads change nothing. */
  readonly write: boolean;
  /** Called by the git hooks in a task's worktree, not by agents themselves: no MCP tool for it. */
  readonly git?: boolean;
  /** A report about the agent itself (its state), neither a read nor a write of the board. */
  readonly report?: boolean;
}

const param = <N extends string, K extends ParamKind, R extends boolean>(p: ParamSpec<N, K, R>): ParamSpec<N, K, R> => p;
const taskId = <R extends boolean>(required: R, describe = 'task id, like T-12') => param({ name: 'taskId', kind: 'taskId', required, positional: true, describe });
const token = param({
  name: 'token',
  kind: 'token',
  required: false,
  positional: false,
  describe: 'the fencing token your claim returned; with it, a write left over from an older claim is refused',
});

/** Every write takes one; the CLI and the MCP server make one per call when none is given. */
const key = param({
  name: 'key',
  kind: 'key',
  required: false,
  positional: false,
  describe: 'an idempotency key: the same write sent again with it (a retry) is answered with its first outcome, not done twice',
});

/** What a task waits on (issue 34), on `add` and `edit`. */
const after = (describe: string) => param({ name: 'after', kind: 'after', required: false, positional: false, describe });

const ref = <R extends boolean>(required: R, describe: string) => param({ name: 'ref', kind: 'ref', required, positional: false, describe, git: true });
const sha = <N extends string, R extends boolean>(name: N, required: R, describe: string) => param({ name, kind: 'sha', required, positional: false, describe, git: true });

/** A number of tokens of one kind (issue 47's `usage`). */
const count = <N extends string, R extends boolean>(name: N, required: R, describe: string) => param({ name, kind: 'count', required, positional: false, describe });

const AGENT_METHOD_TABLE = [
  { name: 'board', summary: 'Show the goal and every task with its state and holder.', params: [], write: false },
  { name: 'show', summary: 'Show one task: body, holder, time left on its lease, notes.', params: [taskId(true)], write: false },
  {
    name: 'why',
    summary: 'Say why no one holds a task (or who does): what it waits on, blocked, needs-attention, in review; each reason a code and a sentence.',
    params: [taskId(true)],
    write: false,
  },
  {
    name: 'queue',
    summary: 'Show the merge queue: approved tasks in the order they land, what each waits on, and the verify command run on each merge.',
    params: [],
    write: false,
  },
  {
    name: 'queue-move',
    summary: 'Move a task of yours in the merge queue to land just before another (also: forkbench queue move ID --before ID); without --before, to the end.',
    params: [
      taskId(true),
      param({ name: 'before', kind: 'taskId', required: false, positional: false, describe: 'the queued task it should land before; omit to move it to the end' }),
      key,
    ],
    write: true,
  },
  {
    name: 'claim',
    summary:
      'Claim a task (without an id: the next ready one, open and waiting on nothing not done). Prints the fencing token to pass to later writes.',
    params: [
      taskId(false, 'task id; omit to take the next ready task'),
      param({
        name: 'force',
        kind: 'flag',
        required: false,
        positional: false,
        describe: 'claim a task that waits on others before they are done (the board notes it); only when the person asks',
      }),
      key,
    ],
    write: true,
  },
  { name: 'renew', summary: 'Extend your lease on a task you hold (any write does this too).', params: [taskId(true), token, key], write: true },
  {
    name: 'note',
    summary: 'Add a progress note to a task you hold.',
    params: [taskId(true), param({ name: 'text', kind: 'note', required: true, positional: true, describe: 'the note' }), token, key],
    write: true,
  },
  {
    name: 'done',
    summary: 'Say a task you hold is done. It goes to review (or to its verify command), not straight to done.',
    params: [taskId(true), token, param({ name: 'note', kind: 'note', required: false, positional: false, describe: 'what you did' }), key],
    write: true,
  },
  { name: 'release', summary: 'Give a task you hold back to the backlog.', params: [taskId(true), token, key], write: true },
  {
    name: 'add',
    summary: 'Add a task to the backlog.',
    params: [
      param({ name: 'title', kind: 'title', required: true, positional: true, describe: 'one-line title' }),
      param({ name: 'body', kind: 'body', required: false, positional: false, describe: 'details' }),
      after('the tasks it waits on, like T-3,T-5: it is ready only once they are all done'),
      param({
        name: 'for',
        kind: 'takers',
        required: false,
        positional: false,
        describe: 'who may take it when the board dispatches, like claude,label:frontend (profiles, and label: with a label); none given: any agent',
      }),
      key,
    ],
    write: true,
  },
  {
    name: 'edit',
    summary: 'Change the title, body or dependencies of a task you hold.',
    params: [
      taskId(true),
      param({ name: 'title', kind: 'title', required: false, positional: false, describe: 'new title' }),
      param({ name: 'body', kind: 'body', required: false, positional: false, describe: 'new body' }),
      after("the tasks it waits on, like T-3,T-5, replacing what it waited on ('' or none: nothing)"),
      token,
      key,
    ],
    write: true,
  },
  {
    name: 'fence',
    summary:
      "Check that you still hold a task (with --token: under that claim). The git hooks in a task's worktree run this before a commit or a push lands; it renews like any write.",
    params: [
      taskId(true),
      token,
      ref(false, "the branch a git ref update moves (with --from: checked against the board's record)"),
      sha('from', false, 'the commit the branch moves from'),
      sha('to', false, 'the commit it moves to'),
      key,
    ],
    write: true,
  },
  {
    name: 'record',
    summary:
      "Record that your task's branch moved (the git hooks run this once a commit has landed). Only what the board records, under a live claim, is the task's work; approval merges nothing else.",
    params: [taskId(true), token, ref(true, 'the branch that moved'), sha('from', true, 'the commit it moved from'), sha('to', true, 'the commit it moved to'), key],
    write: true,
    git: true,
  },
  {
    name: 'dispatch',
    summary:
      "Say whether the board gives you the next ready task when you are idle (on), never (off) or as the Thread's default (thread); --labels: what you take (a task for label:frontend goes to an agent labelled frontend).",
    params: [
      param({ name: 'mode', kind: 'dispatchMode', required: true, positional: true, describe: 'on, off or thread' }),
      param({ name: 'labels', kind: 'labels', required: false, positional: false, describe: "your labels, like frontend,gpu ('' or none: none); omitted: kept as they are" }),
      key,
    ],
    write: true,
  },
  {
    name: 'status',
    summary:
      "Say what you are doing: working, needs-input (waiting on the person; --text: the question) or idle (your turn is over). Your CLI's hooks run this; the window shows it and notifies the person.",
    params: [
      param({ name: 'state', kind: 'agentState', required: true, positional: true, describe: 'working, needs-input or idle' }),
      param({ name: 'text', kind: 'prompt', required: false, positional: false, describe: 'what you are asking the person (with needs-input)' }),
    ],
    // A report about the agent, not a write on a task: no fence, no lease renewal.
    write: false,
    report: true,
  },
  {
    name: 'usage',
    summary:
      "Report what one model turn spent, for a script or a custom agent (agent CLIs' own records are read already): counted to the task you held, else as your own overhead; the same --id is counted once.",
    params: [
      count('input', true, 'input tokens (not read from a cache)'),
      count('output', true, 'output tokens'),
      count('cache-read', false, 'input tokens read from the prompt cache'),
      count('cache-write', false, 'input tokens written to the prompt cache'),
      count('reasoning', false, 'reasoning tokens'),
      param({ name: 'model', kind: 'model', required: false, positional: false, describe: "the model's name, as its price table names it" }),
      param({ name: 'cost', kind: 'usd', required: false, positional: false, describe: 'what the turn cost in US dollars, when known; else the price table estimates it' }),
      param({ name: 'id', kind: 'turnId', required: false, positional: false, describe: 'the turn\'s id: a report with an id already recorded is not counted again (one is made when none is given)' }),
    ],
    // A report about the agent itself, as `status` is: on no task named, so no fence and no lease renewal (the
    // liveness check sees a CLI at work already; a report renewing would let a loop of them keep claims alive).
    write: false,
    report: true,
  },
  {
    name: 'limits',
    summary:
      "Report the rate-limit headroom your CLI shows for a flat-rate plan (Claude Code's status line runs this): the percent of each window used and when it resets, shown beside you in the agent list.",
    params: [
      param({
        name: 'readings',
        kind: 'limits',
        required: true,
        positional: true,
        describe: 'WINDOW=PERCENT[@RESET_UNIX_SECONDS], several apart by commas or spaces, like five_hour=42.5@1765170000 seven_day=10',
      }),
    ],
    // A report about the agent itself, as `usage` is: no task, no fence, no lease renewal.
    write: false,
    report: true,
  },
  {
    name: 'leases',
    summary:
      "Show each agent profile's lease and the evidence for it: how long its claims that ended well went quiet, its lapses, live claims reclaimed, and the lease suggested. Only the person sets a lease (Thread settings).",
    params: [],
    write: false,
  },
  {
    name: 'cost',
    summary:
      "Show what agents spent (issue 47): for a task, its tokens by kind, money, claims, lapses, commits and the same per agent; without an id, the Thread's per task, agent, profile and day. --csv: the same as CSV.",
    params: [
      taskId(false, 'task id; omit for the whole Thread'),
      param({ name: 'csv', kind: 'flag', required: false, positional: false, describe: 'print CSV instead (a header, then one row per task, agent, profile and day)' }),
    ],
    write: false,
  },
] as const;

type TableEntry = (typeof AGENT_METHOD_TABLE)[number];
export type AgentMethod = TableEntry['name'];
export interface MethodSpec extends MethodEntry {
  readonly name: AgentMethod;
}
export const AGENT_METHODS: readonly MethodSpec[] = AGENT_METHOD_TABLE;
export const AGENT_METHOD_NAMES: readonly AgentMethod[] = AGENT_METHODS.map((m) => m.name);

/** The params of method `M` as the table states them, literal types kept: what its input type is derived from. */
export type AgentParamSpecs<M extends AgentMethod> = Extract<TableEntry, { name: M }>['params'][number];

export type { WhyView, ProfileLeaseView, QueueView };

/** `cost`'s answer (issue 47): one task's view, the Thread's, or either as CSV text (`--csv`). */
export type CostAnswer = { readonly task: TaskCostView } | { readonly thread: ThreadCostView } | { readonly csv: string };
/** `usage`'s answer: the turn's id, whether it was counted now (false: that id was recorded before), and where. */
export interface UsageReportView {
  readonly id: string;
  readonly recorded: boolean;
  readonly tokens: number;
  readonly taskId: string | null;
  readonly token: number | null;
  readonly how: 'held' | 'last-acted' | 'overhead' | null;
}

/** `limits`' answer: the readings as the board took them, and whether they were new (the same again is not recorded). */
export interface LimitsReportView {
  readonly recorded: boolean;
  readonly readings: ReadonlyArray<{ readonly window: string; readonly usedPct: number; readonly resetsAt: number | null }>;
}

/** `done`'s answer: the claim, and a warning when review will find no work of this claim to merge. */
export interface DoneView extends ClaimView {
  readonly warning?: string;
}

/** `dispatch`'s answer: the agent's own setting, its labels, and whether dispatch is on for it now. */
export interface DispatchView {
  readonly agentId: string;
  readonly mode: DispatchMode;
  readonly labels: readonly string[];
  readonly on: boolean;
}

/** A branch move the board recorded as the task's work. */
export interface RecordView {
  readonly taskId: string;
  readonly sha: string;
  readonly token: number;
}

/** A claim's answer: the claim, the task's title, and where to work when the Thread has worktrees. */
export interface ClaimResult extends ClaimView {
  readonly title?: string;
  readonly worktree?: ClaimWorktree | null;
}

/** The worktree a claim was handed: `workdir` is where to `cd` (the Thread's folder's place inside it). */
export interface ClaimWorktree extends WorktreeView {
  readonly workdir: string;
  /** What the holder should know: the base had uncommitted changes, the folder was made again… */
  readonly notes: string[];
}

/** A command's synopsis as the CLI's help spells it: `forkbench note ID TEXT [--token N]`. */
export function synopsis(m: MethodSpec): string {
  const parts = [`forkbench ${m.name}`];
  for (const p of m.params) {
    // The key is every write's, said once in the help rather than on each line.
    if (p.git || p.kind === 'key') continue;
    const value = p.kind === 'token' || p.kind === 'count' ? ' N' : p.kind === 'usd' ? ' USD' : p.kind === 'model' ? ' NAME' : p.kind === 'turnId' ? ' ID' : p.kind === 'after' ? ' IDS' : p.kind === 'flag' ? '' : p.kind === 'takers' || p.kind === 'labels' ? ' LIST' : ' TEXT';
    const name = p.positional ? p.name.replace(/^taskId$/, 'ID').toUpperCase() : `--${p.name}${value}`;
    parts.push(p.required ? name : `[${name}]`);
  }
  return parts.join(' ');
}

export function methodSpec(name: string): MethodSpec | undefined {
  return AGENT_METHODS.find((m) => m.name === name);
}

/** Environment variables through which the host hands an agent the board. */
export const AgentEnv = {
  socket: 'FORKBENCH_SOCKET',
  agentId: 'FORKBENCH_AGENT_ID',
  /** The agent's secret (256 bits, per launch). Not the fencing token: that one comes from `claim`. */
  secret: 'FORKBENCH_SECRET',
  threadDir: 'FORKBENCH_THREAD_DIR',
} as const;
