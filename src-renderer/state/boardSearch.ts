import type { Board } from '../../src-shared/board/reducer.js';
import type { AgentInfo } from '../../src-shared/protocol/windowApi.js';

/**
 * The board search: a task matches when every word of the query is in its id, title, holder's name or
 * state (case aside). Run over a column's ids, so the virtualized column draws only the matches and a card
 * deep in a column of 5,000 is found although it was never in the page.
 */
export function matchTasks(ids: readonly string[], board: Board | null, agents: Readonly<Record<string, AgentInfo>>, query: string): readonly string[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0 || !board) return ids;
  const found = ids.filter((id) => {
    const t = board.tasks.get(id);
    if (!t) return false;
    const holder = t.claim ? (agents[t.claim.agentId]?.name ?? t.claim.agentId) : '';
    const text = `${t.id} ${t.title} ${holder} ${t.state}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
  // "T-12" finds T-120 and T-1200 too: the task that is T-12 comes first (issue 44).
  const exact = exactId(found, query);
  return exact === null ? found : [exact, ...found.filter((id) => id !== exact)];
}

/** The id among `ids` that the query is, whole (case aside): "t-12" is T-12. */
export function exactId(ids: readonly string[], query: string): string | null {
  const q = query.trim().toLowerCase();
  return ids.find((id) => id.toLowerCase() === q) ?? null;
}
