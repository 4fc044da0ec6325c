/**
 * The window's actions as the command palette lists them. The palette owns no behaviour: each component
 * that has an action (the Launch menu, the Thread settings line, the board search…) adds a source here
 * whose commands call the very functions its own buttons and keys call.
 */
export interface PaletteCommand {
  /** Stable, for the list's keys and tests. */
  id: string;
  /** What the list shows, e.g. "Launch Shell". */
  title: string;
  /** Where it belongs: Agents, Tasks, Board, Window. */
  group: string;
  /** The command's own shortcut, shown beside it. */
  keys?: string;
  /** A second line: an install command, the title of a task. */
  detail?: string;
  /** More words the filter matches than the title shows. */
  keywords?: string;
  /** Why it cannot run now; such commands are listed but not run. */
  disabled?: string;
  run(): void;
}

/** A component's commands for the palette's query (most ignore it; "open task" answers it). */
export type CommandSource = (query: string) => readonly PaletteCommand[];

export class CommandRegistry {
  private readonly sources = new Set<CommandSource>();

  /** Adds a source; the returned function removes it (a component's effect cleanup). */
  add(source: CommandSource): () => void {
    // A function object may be added twice (StrictMode runs effects twice); a wrapper keeps each add its own.
    const own: CommandSource = (q) => source(q);
    this.sources.add(own);
    return () => {
      this.sources.delete(own);
    };
  }

  /** Every source's commands for `query`, in the order the sources were added. */
  commands(query: string): PaletteCommand[] {
    const out: PaletteCommand[] = [];
    for (const source of this.sources) out.push(...source(query));
    return out;
  }

  /** The commands that match `query`, best first (filterCommands). */
  matching(query: string): PaletteCommand[] {
    return filterCommands(this.commands(query), query);
  }
}

/** Group order in the list, so "Agents" does not move around as components mount. */
const GROUP_ORDER = ['Agents', 'Tasks', 'Board', 'Window'];

/**
 * The commands every word of `query` is found in (title, group, keywords, detail; case aside), best first:
 * a title that starts with the query, then one with a word starting with the first query word, then the
 * rest; within a rank, by group and the order given. No query: all of them, by group.
 */
export function filterCommands(commands: readonly PaletteCommand[], query: string): PaletteCommand[] {
  const q = query.trim().toLowerCase();
  const words = q.split(/\s+/).filter(Boolean);
  const groupRank = (c: PaletteCommand) => {
    const i = GROUP_ORDER.indexOf(c.group);
    return i < 0 ? GROUP_ORDER.length : i;
  };
  const ranked: Array<{ c: PaletteCommand; rank: number; group: number; at: number }> = [];
  commands.forEach((c, at) => {
    const title = c.title.toLowerCase();
    const text = `${title} ${c.group} ${c.keywords ?? ''} ${c.detail ?? ''}`.toLowerCase();
    if (!words.every((w) => text.includes(w))) return;
    const first = words[0] ?? '';
    const rank = !q ? 0 : title.startsWith(q) ? 0 : title.split(/[\s“"(]+/).some((w) => w.startsWith(first)) ? 1 : 2;
    ranked.push({ c, rank, group: groupRank(c), at });
  });
  ranked.sort((a, b) => a.rank - b.rank || a.group - b.group || a.at - b.at);
  return ranked.map((r) => r.c);
}
