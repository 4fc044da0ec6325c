import type { StoreApi } from 'zustand/vanilla';
import { EventPageLimits, type KeptFrom } from '../../src-shared/board/eventPage.js';
import type { AppState } from './appState.js';
import type { CallHost } from './hostCall.js';
import { firstOf, LOG_CAP, LOG_HISTORY_CAP, prependLog, toLogEntry, type LogEntry } from './eventLog.js';

/**
 * How the event-log panel's lines stand against the board's history. The lines are always one unbroken run
 * of the board's events (the snapshot's tail, live events after it, older pages before it), so what they
 * cover is their first and last positions, and what exists is the board's head: the panel says both.
 */
export interface LogPaging {
  /** Lines kept as live events come: LOG_CAP, raised to LOG_HISTORY_CAP once older pages are read. */
  readonly keep: number;
  /** The lines end at the board's head and live events are added. False once the newest lines made room for
   *  older ones: live events are then not shown until the person goes back to the newest. */
  readonly following: boolean;
  /** Where the store's kept history begins, as the last page read said; undefined before one was read (the
   *  board's first event, position 1, is assumed until then). */
  readonly keptFrom: KeptFrom | null | undefined;
  /** A page is being read. */
  readonly loading: boolean;
}

export const FOLLOWING: LogPaging = { keep: LOG_CAP, following: true, keptFrom: undefined, loading: false };

/** The oldest position the panel can reach: the store's first kept event, or the board's first. */
export const reachableFrom = (p: LogPaging): number => p.keptFrom?.seq ?? 1;

/** Whether older events than the panel's lines exist in the store. */
export function hasOlder(log: readonly LogEntry[], p: LogPaging, head: number): boolean {
  const first = log[0];
  return first ? firstOf(first) > reachableFrom(p) : head >= reachableFrom(p) && head > 0;
}

/** A task's own events, read by its id from the store (the board's index), newest page last read. */
export interface TaskLines {
  readonly taskId: string;
  /** Oldest first. */
  readonly lines: readonly LogEntry[];
  /** The store has older events about it. */
  readonly more: boolean;
}

/** Reads the board's history a page at a time for the panel: `board.events`, newest first. */
export class LogHistory {
  constructor(
    private readonly store: StoreApi<AppState>,
    private readonly call: CallHost,
    private readonly name: (agentId: string) => string,
  ) {}

  /** The page before the panel's first line, put before it. */
  async loadOlder(): Promise<void> {
    const s = this.store.getState();
    const key = s.activeKey;
    if (!key || s.logPaging.loading) return;
    const first = s.log[0];
    // Nothing the panel holds is trimmed while the page is read: the page must meet the lines it goes before.
    this.setPaging({ loading: true, keep: LOG_HISTORY_CAP });
    const r = await this.call('board.events', { key, limit: EventPageLimits.maxEvents, ...(first ? { before: firstOf(first) } : {}) }, 'read older events');
    const now = this.store.getState();
    if (now.activeKey !== key) return;
    if (!r.ok) return this.setPaging({ loading: false });
    const { lines, droppedNewest } = prependLog(now.log, r.value.events.map(this.entry), LOG_HISTORY_CAP);
    this.store.setState({ log: lines, logPaging: { keep: LOG_HISTORY_CAP, following: now.logPaging.following && !droppedNewest, keptFrom: r.value.keptFrom, loading: false } });
  }

  /** Back to the board's head: the newest page, and live events added again. Following starts before the
   *  page is read, so an event pushed meanwhile is kept and the page meets it. */
  async backToNewest(): Promise<void> {
    const key = this.store.getState().activeKey;
    if (!key) return;
    this.store.setState({ log: [], logPaging: { ...FOLLOWING, loading: true } });
    const r = await this.call('board.events', { key, limit: LOG_CAP }, 'read the newest events');
    const now = this.store.getState();
    if (now.activeKey !== key) return;
    if (!r.ok) return this.setPaging({ loading: false });
    this.store.setState({ log: prependLog(now.log, r.value.events.map(this.entry), Infinity).lines.slice(-LOG_CAP), logPaging: { ...FOLLOWING, keptFrom: r.value.keptFrom } });
  }

  /** A page of one task's events, below `before` (its oldest line held) or its newest. */
  async taskPage(taskId: string, held?: TaskLines): Promise<TaskLines | null> {
    const key = this.store.getState().activeKey;
    if (!key) return null;
    const before = held?.lines[0]?.seq;
    const r = await this.call('board.events', { key, taskId, limit: EventPageLimits.maxEvents, ...(before !== undefined ? { before } : {}) }, `read ${taskId}'s events`);
    if (!r.ok || this.store.getState().activeKey !== key) return null;
    const older = r.value.events.map(this.entry).reverse();
    const lines = [...older, ...(held?.lines ?? [])];
    // Bounded like the panel: a task with more events than that keeps its newest.
    return { taskId, lines: lines.slice(-LOG_HISTORY_CAP), more: r.value.events.length === EventPageLimits.maxEvents && lines.length < LOG_HISTORY_CAP };
  }

  private readonly entry = (e: Parameters<typeof toLogEntry>[0]): LogEntry => toLogEntry(e, this.name);

  private setPaging(patch: Partial<LogPaging>): void {
    this.store.setState((s) => ({ logPaging: { ...s.logPaging, ...patch } }));
  }
}

/** What the panel says of its lines against the board's history. */
export interface LogCoverage {
  /** Events the lines stand for (renewals folded into a line count each), and the board's total. */
  readonly covered: number;
  readonly head: number;
  /** The lines' first and last positions (0 for none). */
  readonly from: number;
  readonly to: number;
  /** The store has events older than the lines. */
  readonly older: boolean;
  /** Events newer than the lines that the panel does not show (it stopped following). */
  readonly newer: number;
  /** Events the store no longer keeps (before its kept history's start), once the lines reach that start. */
  readonly removed: KeptFrom | null;
}

export function logCoverage(log: readonly LogEntry[], p: LogPaging, head: number): LogCoverage {
  const first = log[0];
  const last = log.at(-1);
  const from = first ? firstOf(first) : 0;
  const to = last ? last.seq : 0;
  const older = hasOlder(log, p, head);
  const removed = !older && p.keptFrom && p.keptFrom.seq > 1 ? p.keptFrom : null;
  return { covered: first ? to - from + 1 : 0, head, from, to, older, newer: p.following ? 0 : Math.max(0, head - to), removed };
}

/** The coverage in words: "the 300 newest of 2,024 events", "all 26 events", "events #1–#5,000 of 12,000". */
export function coverageWords(c: LogCoverage): string {
  const n = (x: number) => x.toLocaleString('en-US');
  if (c.head === 0) return 'no events yet';
  if (c.newer > 0) return `events #${n(c.from)}–#${n(c.to)} of ${n(c.head)}; ${n(c.newer)} newer not shown`;
  if (!c.older && !c.removed) return `all ${n(c.covered)} events`;
  return `the ${n(c.covered)} newest of ${n(c.head)} events`;
}
