import * as fs from 'node:fs';
import { writeFileAtomic } from '../base/atomicWrite.js';
import { readStartTicks } from '../base/procStat.js';
import { ProcessGroupKiller } from '../pty/processGroupKiller.js';

/**
 * Which processes a pty host's panes are, on disk beside its socket (in its owner-only folder): pids and
 * start times, never who the agents are or their secrets. The pty host rewrites it as panes come and go.
 *
 * When a pty host dies, its panes' processes get the hangup of their terminal's end, and one that ignores
 * SIGHUP lives on. The board host ends those it knows (it listed them, or launched them); this record is how
 * the ones it was never told of are found: a pty host killed before it answered a new board host's list,
 * or while no board host was connected. Whoever sees the pty host gone (the board host whose link was lost,
 * the launcher about to start a new one) sweeps it.
 */

interface RecordedPane {
  pid: number;
  /** The process's start time, so a pid passed to a stranger is never signalled. */
  startTicks: number | undefined;
}

/** Written whole and renamed into place: a reader never sees half a record. */
export function writePaneRecord(path: string, panes: RecordedPane[]): void {
  writeFileAtomic(path, JSON.stringify({ panes }), { mode: 0o600 });
}

/** The pane's entry, its start time as the session read it at spawn (the process is ours and alive then). */
export function recordedPane(pid: number, startTicks: number | undefined): RecordedPane {
  return { pid, startTicks };
}

/**
 * End every recorded pane that still runs as the same process (start time checked: no start time, as on a
 * platform without /proc, means it cannot be told, and nothing is signalled), with its session's process
 * groups, except the pids in `done` (already ended by who calls); the record goes. The pids ended.
 */
export function sweepPaneRecord(path: string, done: ReadonlySet<number> = new Set()): number[] {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(path, 'utf8'));
  } catch {
    return []; // none, or not readable: nothing to go on
  }
  fs.rmSync(path, { force: true });
  const panes = (raw as { panes?: unknown } | null)?.panes;
  const ended: number[] = [];
  for (const p of Array.isArray(panes) ? (panes as Array<Partial<RecordedPane> | null>) : []) {
    const pid = p?.pid;
    const startTicks = p?.startTicks;
    if (!Number.isInteger(pid) || (pid as number) <= 1 || !Number.isInteger(startTicks) || done.has(pid as number)) continue;
    if (readStartTicks(pid as number) !== startTicks) continue;
    new ProcessGroupKiller(pid as number, { rootStartTicks: startTicks }).finish();
    ended.push(pid as number);
  }
  return ended;
}
