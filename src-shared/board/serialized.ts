import type { Task, ThreadSettings } from './model.js';
import { NEW_TASK, withDefaults, type Board } from './reducer.js';
import { NO_EVIDENCE, type LeaseEvidence } from './leaseEvidence.js';
import { copyBook, emptyBook } from '../usage/costFold.js';
import type { CostBook } from '../usage/usage.js';
import { deserializeLedger, serializeLedger, type SerializedLedger } from './usageLedger.js';

/**
 * A task as stored in a snapshot file and sent in a window's snapshot: fields that still hold a new task's
 * value are left out. Most tasks of a large backlog were never claimed, so this carries a 5k-task board in
 * ~0.4 MB instead of ~1 MB, and JSON time (both ends) follows the size.
 */
export type CompactTask = Pick<Task, 'id' | 'title' | 'state' | 'createdAt'> & Partial<Task>;

const OPTIONAL_KEYS = Object.keys(NEW_TASK) as Array<keyof typeof NEW_TASK>;

export function compactTask(t: Task): CompactTask {
  const out: Record<string, unknown> = { id: t.id, title: t.title, state: t.state, createdAt: t.createdAt };
  for (const k of OPTIONAL_KEYS) {
    const v = t[k];
    if (k === 'notes' ? (v as Task['notes']).length > 0 : v !== NEW_TASK[k]) out[k] = v;
  }
  return out as CompactTask;
}

export function expandTask(c: CompactTask): Task {
  return { ...NEW_TASK, ...c };
}

/** A board as plain JSON (tasks as an array): what a snapshot file and a window's snapshot both carry. */
export interface SerializedBoard {
  threadId: string;
  goal: string;
  settings: ThreadSettings;
  tasks: CompactTask[];
  nextToken: number;
  nextTaskNumber: number;
  seq: number;
  /** The lease evidence (leaseEvidence.ts); absent in snapshots from before, which read as none. */
  evidence?: LeaseEvidence;
  /** What agents spent besides each task's own (issue 47); absent in snapshots from before, which read as nothing. */
  costs?: CostBook;
  /** Issue 47 (usageLedger.ts): absent in snapshots from before, and in a window's (windowBoard.ts: a window
   *  attributes nothing), which read as empty. */
  usageLedger?: SerializedLedger;
}

/**
 * Each task's compact form, kept as long as the task object lives. The reducer never changes a task in
 * place (its fields are readonly; a change sets a new object), so an entry can never go stale, and a
 * snapshot of a 5k-task board re-compacts only the tasks that changed since the last one. A window's
 * snapshot is a rare call, so compactTask never gets hot in the JIT: at 5k tasks it took 7-10 ms on this
 * machine on every reload, the cached walk well under 1 ms.
 */
const compacted = new WeakMap<Task, CompactTask>();

export function serializeBoard(b: Readonly<Board>): SerializedBoard {
  const tasks: CompactTask[] = [];
  for (const t of b.tasks.values()) {
    let c = compacted.get(t);
    if (c === undefined) compacted.set(t, (c = compactTask(t)));
    tasks.push(c);
  }
  return { threadId: b.threadId, goal: b.goal, settings: b.settings, tasks, nextToken: b.nextToken, nextTaskNumber: b.nextTaskNumber, seq: b.seq, evidence: b.evidence, costs: copyBook(b.costs), usageLedger: serializeLedger(b.usageLedger) };
}

/** The board back from its JSON. Full tasks (older snapshot files) read the same as compact ones. */
export function deserializeBoard(s: SerializedBoard): Board {
  const { tasks, ...rest } = s;
  return { ...rest, settings: withDefaults(s.settings), evidence: s.evidence ?? NO_EVIDENCE, costs: s.costs ? copyBook(s.costs) : emptyBook(), usageLedger: deserializeLedger(s.usageLedger), tasks: new Map(tasks.map((t) => [t.id, expandTask(t)])) };
}

/** Each compact task's JSON text, kept as long as the compact task lives (itself as long as its task). */
const taskJson = new WeakMap<CompactTask, string>();

/**
 * A serialized board as JSON text: what JSON.stringify(s) gives, but each task's text is kept from the last
 * time, so a 5k-task board is re-encoded only where it changed. For transports that send text (serve's
 * WebSocket): JSON.stringify of the whole snapshot took 5 ms on a quiet host here and up to 30 ms during a
 * page load.
 */
export function serializedBoardJson(s: SerializedBoard): string {
  const parts = new Array<string>(s.tasks.length);
  for (let i = 0; i < s.tasks.length; i++) {
    const t = s.tasks[i]!;
    let text = taskJson.get(t);
    if (text === undefined) taskJson.set(t, (text = JSON.stringify(t)));
    parts[i] = text;
  }
  const { tasks: _tasks, ...rest } = s;
  // `tasks` last, as a stand-in: the text ends `"tasks":0}`, and the array goes where the 0 was.
  const head = JSON.stringify({ ...rest, tasks: 0 });
  return `${head.slice(0, -2)}[${parts.join(',')}]}`;
}
