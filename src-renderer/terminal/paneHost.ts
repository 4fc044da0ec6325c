/** What the window's controller drives of the terminal area: the panes of the Thread on screen. */
export interface PaneHost {
  /** The Thread whose panes are shown; a different key disposes every pane. */
  setThread(key: string | null): void;
  /** Create (and restore from `agent.screen`) panes for new agents, dispose panes of gone ones;
   *  with `restoreAll`, existing panes are restored too (after a reconnect: pushes were lost). */
  sync(agentIds: readonly string[], restoreAll: boolean): void;
  /** Live output for a pane of the active Thread; false if there is no such pane (the caller acks it). */
  data(agentId: string, data: string): boolean;
  /** The size to launch a new agent with: what a pane in the terminal area would fit. */
  preferredSize(): { cols: number; rows: number };
}
