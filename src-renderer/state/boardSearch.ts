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
  return ids.filter((id) => {
    const t = board.tasks.get(id);
    if (!t) return false;
    const holder = t.claim ? (agents[t.claim.agentId]?.name ?? t.claim.agentId) : '';
    const text = `${t.id} ${t.title} ${holder} ${t.state}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
}
