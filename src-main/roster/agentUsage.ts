import type { BoardService } from '../board/boardService.js';
import { usageReaderFor } from '../usage/usageRecords.js';
import { UsageWatcher } from '../usage/usageWatcher.js';
import type { AgentSessions } from './agentSessions.js';

/**
 * The usage readers of the roster's live agents (issue 47): one UsageWatcher per agent whose CLI's records
 * Forkbench reads, from the moment its pane is wired (launched, resumed or adopted after a restart) until its
 * process is gone, when a last read picks up the turns it wrote as it ended. The roster is their one owner.
 */
export class AgentUsage {
  private readonly watchers = new Map<string, UsageWatcher>();

  constructor(
    private readonly d: {
      board: BoardService;
      sessions: AgentSessions;
      env: Record<string, string | undefined>;
      folder: string;
      warn?: (message: string) => void;
      /** The readers' poll interval (UsageWatch.pollMs unless a test sets one). */
      pollMs?: number;
    },
  ) {}

  watch(agentId: string, profile: string): void {
    this.watchers.get(agentId)?.dispose();
    const { d } = this;
    const stored = d.sessions.get(agentId);
    const reader = usageReaderFor(profile, {
      agentId,
      stateDir: d.sessions.stateDirOf(agentId),
      env: d.env,
      cwd: stored?.cwd ?? d.folder,
      startedAt: stored?.startedAt ?? Date.now(),
      // Read each time: a CLI that names its session itself has it recorded once found.
      sessionId: () => d.sessions.get(agentId)?.sessionId ?? null,
    });
    if (!reader) return;
    const watcher = new UsageWatcher(
      reader,
      (turns, limits, window) => d.board.run((e) => e.recordUsage(agentId, reader.source, turns, limits, window)),
      d.warn ?? (() => undefined),
      { pollMs: d.pollMs },
    );
    this.watchers.set(agentId, watcher);
  }

  /** The agent's process is gone: one last read, then its watcher stops. */
  finish(agentId: string): Promise<void> {
    const w = this.watchers.get(agentId);
    if (!w) return Promise.resolve();
    this.watchers.delete(agentId);
    w.dispose();
    return w.last().catch(() => undefined);
  }

  dispose(): void {
    for (const w of this.watchers.values()) w.dispose();
    this.watchers.clear();
  }
}
